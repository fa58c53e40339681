// Issue 15's read-query shapes, differential: the same statements through node-postgres against
// the router (two data nodes) and one plain Postgres, rows (in order where ORDER BY is total, else
// as multisets), column names and types, SQLSTATEs and messages compared. Expressions over
// aggregates, = ANY arrays, now()/current_date across nodes, subqueries in FROM, CTEs pinned to
// one key, UNION across keyspaces, INSERT ... RETURNING over several nodes, and which error a
// statement invalid in several places reports.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import type { TestCluster } from '../testing/cluster.js';
import {
  ORDERS_CLUSTER,
  startDifferentialPair,
  type DifferentialPair,
} from '../testing/differential.js';
import { describeOutcome, judge, runQuery, type Outcome } from '../testing/oracle/compare.js';

const DDL = [
  `create table orders (tenant_id bigint not null, id int not null, total int, amount numeric(10,2),
     status text, created timestamptz, primary key (tenant_id, id))`,
  'create table items (tenant_id bigint not null, order_id int not null, qty int)',
  'create table counters (k int primary key, v int)',
  'create table countries (code text primary key, name text)',
];

function loadRows(): string[] {
  const orders: string[] = [];
  const items: string[] = [];
  for (let t = 1; t <= 40; t++) {
    for (let i = 1; i <= 1 + (t % 3); i++) {
      const total = t % 7 === 0 ? 'null' : String((t * 13 + i * 7) % 50);
      const amount = t % 5 === 0 ? 'null' : `${(t * 3.25 + i).toFixed(2)}`;
      const status = ['new', 'paid', 'sent'][(t + i) % 3]!;
      // Recent rows (an hour old) and old ones (ten days old), whatever the clock says.
      const age = t % 4 === 0 ? "interval '1 hour'" : "interval '10 days'";
      orders.push(`(${t}, ${i}, ${total}, ${amount}, '${status}', now() - ${age})`);
      items.push(`(${t}, ${i}, ${(t + i) % 4})`);
    }
  }
  const counters = Array.from({ length: 30 }, (_, i) => `(${i * 3 - 20}, ${i % 6})`);
  return [
    `insert into orders (tenant_id, id, total, amount, status, created) values ${orders.join(', ')}`,
    `insert into items (tenant_id, order_id, qty) values ${items.join(', ')}`,
    `insert into counters (k, v) values ${counters.join(', ')}`,
    "insert into countries (code, name) values ('fr', 'France'), ('de', 'Germany')",
  ];
}

let pair: DifferentialPair;
let c: TestCluster;
let viaRouter: pg.Client;
let plain: pg.Client;

before(async () => {
  pair = await startDifferentialPair(ORDERS_CLUSTER, 'shapes-plain', [...DDL, ...loadRows()]);
  ({ cluster: c, viaRouter, direct: plain } = pair);
});

after(async () => {
  await pair?.dispose();
});

async function routeCounts(): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/tessera_router_statements_total\{route="(\w+)"[^}]*\} (\d+)/g))
    out.set(m[1]!, Number(m[2]));
  return out;
}

interface Case {
  readonly sql: string;
  /** The ORDER BY is total: rows compared in order. */
  readonly ordered?: boolean;
  /** Parameters (then through the extended protocol only). */
  readonly params?: readonly unknown[];
  /** The route the router's metrics must count (scatter, single). */
  readonly route?: 'scatter' | 'single';
  /** Through the simple protocol only (a write run once). */
  readonly simple?: boolean;
}

function run(client: pg.Client, k: Case, extended: boolean): Promise<Outcome> {
  return runQuery(client, k.sql, extended, k.params);
}

/** Runs the case on both (simple and extended protocol) and asserts the same answer, not refused. */
async function same(k: Case): Promise<Outcome> {
  let last: Outcome | undefined;
  for (const extended of k.params !== undefined
    ? [true]
    : k.simple === true
      ? [false]
      : [false, true]) {
    const before = await routeCounts();
    const r = await run(viaRouter, k, extended);
    const grew = [...(await routeCounts())].filter(([n, v]) => v > (before.get(n) ?? 0));
    const p = await run(plain, k, extended);
    const why = `${k.sql} (${extended ? 'extended' : 'simple'})\n  router: ${describeOutcome(r)}\n  plain:  ${describeOutcome(p)}`;
    assert.equal(judge(r, p, k.ordered ?? false), 'pass', why);
    if (k.route !== undefined)
      assert.deepEqual(
        grew.map(([n]) => n),
        [k.route],
        `${why}\n  routes counted ${JSON.stringify(grew)}`,
      );
    last = r;
  }
  return last!;
}

describe('query shapes across nodes: router vs plain Postgres', () => {
  test('expressions over aggregate results', async () => {
    const exprs = [
      'count(*)::int',
      'coalesce(sum(total), 0)',
      'coalesce(sum(amount), 0)',
      'sum(total) / count(*)',
      'round(avg(total), 2)',
      'round(avg(amount), 1)',
      'sum(amount) / nullif(count(*), 0)',
      'max(total) - min(total) + 1',
    ];
    for (const e of exprs) {
      await same({ sql: `select ${e} as v from orders`, route: 'scatter' });
      await same({ sql: `select ${e} as v from orders where total > 1000` });
      await same({
        sql: `select status, ${e} as v from orders group by status order by status`,
        ordered: true,
      });
    }
    await same({
      sql: 'select status, count(*)::int as n from orders group by status having sum(total) / count(*) > 10 order by coalesce(sum(total), 0) desc, 1',
      ordered: true,
    });
  });

  test('= ANY with an array literal or an array parameter', async () => {
    await same({
      sql: 'select tenant_id, id, total from orders where tenant_id = any(array[1, 2, 3, 17, 33])',
    });
    await same({ sql: "select tenant_id, id from orders where tenant_id = any('{4,5,6,40}')" });
    await same({
      sql: 'select count(*), sum(i.qty) from orders o join items i on i.tenant_id = o.tenant_id and i.order_id = o.id where o.tenant_id = any(array[2, 9, 21]::bigint[])',
    });
    await same({
      sql: 'select tenant_id, id from orders where tenant_id = any($1)',
      params: [[3, 8, 12, 25]],
    });
    await same({
      sql: 'select count(*)::int from orders where tenant_id = any($1::bigint[])',
      params: ['{1,2,3,4,5,6}'],
    });
  });

  test('now(), current_timestamp and current_date: one instant on every node', async () => {
    await same({
      sql: "select tenant_id, id from orders where created > now() - interval '1 day'",
      route: 'scatter',
    });
    await same({
      sql: "select count(*) from orders where created > current_timestamp - interval '2 days'",
    });
    await same({
      sql: 'select status, count(*) from orders where created::date < current_date group by status order by status',
      ordered: true,
    });
    await same({ sql: 'select count(*) from orders where created < transaction_timestamp()' });
    // Every node read the same now(): one distinct value, as on one Postgres.
    await same({ sql: 'select count(*) from (select distinct now() as t from orders) s' });
    await same({ sql: 'select count(*) from (select distinct current_date as d from orders) s' });
    await same({
      sql: "select tenant_id, id from orders where created < $1::timestamptz - interval '5 days' and created < now()",
      params: ['2999-01-01 00:00:00+00'],
    });
  });

  test('subqueries in FROM (ORM count() and pagination shapes)', async () => {
    await same({
      sql: 'select count(*) from (select distinct status from orders) s',
      route: 'scatter',
    });
    // SQLAlchemy query.count()
    await same({
      sql: 'SELECT count(*) AS count_1 FROM (SELECT orders.tenant_id AS orders_tenant_id, orders.id AS orders_id FROM orders WHERE orders.total > 10) AS anon_1',
    });
    // Django .distinct().count()
    await same({
      sql: 'SELECT COUNT(*) FROM (SELECT DISTINCT "orders"."status" AS "col1", "orders"."total" AS "col2" FROM "orders") subquery',
    });
    await same({
      sql: 'select count(*) from (select tenant_id from orders order by tenant_id, id limit 7) s',
    });
    await same({
      sql: 'select s.tenant_id, s.n, s.t from (select tenant_id, count(*) as n, sum(total) as t from orders group by tenant_id) s where s.n > 1 order by s.tenant_id limit 10',
      ordered: true,
    });
  });

  test('[NOT] EXISTS over a read across nodes (SQLAlchemy query.exists())', async () => {
    await same({
      sql: "SELECT EXISTS (SELECT 1 FROM orders WHERE orders.status = 'paid') AS anon_1",
      route: 'scatter',
    });
    await same({ sql: "select exists (select * from orders where status = 'lost')" });
    await same({ sql: 'select not exists (select 1 from orders where total > 40)' });
    await same({
      sql: 'select exists (select 1 from orders o join items i using (tenant_id) where i.qty > 2)',
    });
    await same({
      sql: 'select exists (select status from orders group by status having count(*) > 1000)',
    });
    await same({ sql: 'select exists (select 1 from orders where total > $1)', params: [45] });
  });

  test('a CTE or subquery pinned to one key runs on that node', async () => {
    await same({
      sql: 'with x as (select * from orders where tenant_id = 12) select count(*), sum(total) from x',
      route: 'single',
    });
    await same({
      sql: 'select id, total from orders where tenant_id = 9 and total >= (select min(total) from orders where tenant_id = 9) order by id',
      ordered: true,
      route: 'single',
    });
    await same({
      sql: 'with x as (select * from orders where tenant_id = $1) select id, total from x order by id',
      params: [14],
      ordered: true,
      route: 'single',
    });
    // Levels pinned to different nodes: across nodes, each level's rows from its own node.
    await same({
      sql: 'select tenant_id, id from orders where tenant_id = 1 union all select tenant_id, order_id from items where tenant_id = 2',
      route: 'scatter',
    });
    await same({
      sql: 'with x as (select tenant_id, status from orders where total > 20) select status, count(*) from x group by status order by status',
      ordered: true,
    });
  });

  test('UNION and UNION ALL across nodes and keyspaces', async () => {
    await same({
      sql: 'select tenant_id from orders union select tenant_id from items',
      route: 'scatter',
    });
    await same({
      sql: 'select tenant_id::int as v from orders union select k from counters',
      route: 'scatter',
    });
    await same({
      sql: 'select k as v from counters where v > 2 union all select id from orders order by 1 limit 12',
      ordered: true,
    });
  });

  test('INSERT ... RETURNING whose rows go to several nodes returns them in VALUES order', async () => {
    const values = Array.from(
      { length: 12 },
      (_, i) => `(${100 + ((i * 7) % 12)}, ${i}, ${i * 2})`,
    );
    await same({
      sql: `insert into orders (tenant_id, id, total) values ${values.join(', ')} returning tenant_id, id, total * 10 as t`,
      ordered: true,
      simple: true,
    });
    await same({
      sql: 'select tenant_id, id, total from orders where tenant_id >= 100 order by 1, 2',
      ordered: true,
    });
    // Inside a transaction, then rolled back.
    for (const cl of [viaRouter, plain]) await cl.query('begin');
    await same({
      sql: 'insert into orders (tenant_id, id) values (201, 1), (202, 1), (203, 1), (204, 1) returning *',
      ordered: true,
      simple: true,
    });
    for (const cl of [viaRouter, plain]) await cl.query('rollback');
    await same({ sql: 'select count(*) from orders where tenant_id > 200' });
  });

  test('INSERT ... RETURNING over nodes that skips a row is refused and rolled back', async () => {
    const sql =
      'insert into orders (tenant_id, id) values (100, 0), (301, 1), (302, 1), (303, 1) on conflict do nothing returning tenant_id';
    const r = await runQuery(viaRouter, sql);
    assert.equal(r.kind, 'error', describeOutcome(r));
    assert.equal(r.code, '0A000', describeOutcome(r));
    const left = await runQuery(viaRouter, 'select count(*) from orders where tenant_id > 300');
    assert.deepEqual(left.rows, [['0']]);
  });

  test('a statement invalid in several places reports the error plain Postgres reports', async () => {
    const bad = [
      'select status, nosuch from orders group by status having sum(total) > 0',
      'select count(*) from orders having sum(nosuch_a) > 0 order by max(nosuch_b)',
      'select count(*) from orders order by sum(nosuch_b) having sum(nosuch_a) > 0',
      'select status from orders group by status having avg(status) > 1 order by sum(nosuch)',
      'select tenant_id, count(*) from orders group by tenant_id order by max(nosuch_b), min(nosuch_a)',
      'select sum(total) from orders having min(nosuch) > 0 order by 1 limit $1',
    ];
    for (const sql of bad) {
      const r = await same({ sql: sql.replace(' limit $1', ' limit 5') });
      assert.equal(r.kind, 'error', sql);
      assert.match(r.code ?? '', /^42/, sql);
    }
  });
});
