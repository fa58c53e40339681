// INSERT ... SELECT into a sharded table, differential: the same statements through node-postgres
// (simple and extended protocol) against the router (two data nodes) and one plain Postgres with
// the same rows: same tags, SQLSTATEs and final rows, each row on the node its key hashes to.
// Colocated (key to key in one keyspace, reference tables) runs on every node; otherwise the
// SELECT's rows (one node's, generate_series, unnest of parameters) go through the router.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import type { TestCluster } from './testing/cluster.js';
import {
  ORDERS_CLUSTER,
  startDifferentialPair,
  type DifferentialPair,
} from './testing/differential.js';
import { keysByNode } from './testing/keys.js';

let pair: DifferentialPair;
let c: TestCluster;
let viaRouter: pg.Client;
let direct: pg.Client;

const DDL = [
  'create table orders (tenant_id bigint not null, id int not null, total int not null check (total >= 0), primary key (tenant_id, id))',
  'create table items (tenant_id bigint not null, qty numeric not null)',
  'create table counters (k int primary key, v int not null)',
  'create table countries (code text primary key, n int not null)',
];

before(async () => {
  pair = await startDifferentialPair(ORDERS_CLUSTER, 'insert-select-plain', DDL);
  ({ cluster: c, viaRouter, direct } = pair);
});
after(async () => {
  await pair?.dispose();
});

beforeEach(async () => {
  for (const client of [viaRouter, direct]) {
    for (const t of ['orders', 'items', 'counters', 'countries'])
      await client.query(`delete from ${t}`);
    await client.query(
      `insert into orders (tenant_id, id, total) select t, i, (t * 7 + i) % 20 from generate_series(1, 30) t, generate_series(1, 3) i`,
    );
    await client.query('insert into counters (k, v) select g, g * 2 from generate_series(1, 20) g');
    await client.query("insert into countries values ('fr', 1), ('de', 2)");
  }
});

type Result = { command?: string; rowCount?: number | null; error?: string };

async function run(client: pg.Client, sql: string, params?: unknown[]): Promise<Result> {
  try {
    const r = await client.query(sql, params);
    return { command: r.command, rowCount: r.rowCount };
  } catch (e) {
    return { error: (e as { code?: string }).code };
  }
}

/** The statement on both sides (extended protocol when `params`): the same answer. */
async function same(sql: string, params?: unknown[]): Promise<Result> {
  const r = await run(viaRouter, sql, params);
  assert.deepEqual(r, await run(direct, sql, params), sql);
  return r;
}

/** Same rows on both sides; on the router's side each row on the node that owns its key. */
async function sameRows(): Promise<void> {
  for (const [t, key, cols] of [
    ['orders', 'tenant_id', 'tenant_id, id, total'],
    ['items', 'tenant_id', 'tenant_id, qty'],
    ['counters', 'k', 'k, v'],
  ] as const) {
    const sql = `select ${cols} from ${t} order by ${cols}`;
    assert.deepEqual((await viaRouter.query(sql)).rows, (await direct.query(sql)).rows, sql);
    const keys = keysByNode(c.router, t, 4000);
    for (const [node, server] of c.byName)
      for (const row of await server.query<Record<string, string>>(`select ${key} k from ${t}`))
        assert.ok(keys.get(node)?.includes(Number(row['k'])), `${t} ${row['k']} on ${node}`);
  }
  const prepared = await Promise.all(
    [...c.byName.values()].map((s) => s.query('select gid from pg_prepared_xacts')),
  );
  assert.deepEqual(prepared.flat(), []);
}

describe('INSERT ... SELECT into a sharded table: router vs plain Postgres', () => {
  test('colocated: key to key in one keyspace, with reference tables, runs on every node', async () => {
    await same(
      'insert into items (tenant_id, qty) select tenant_id, total from orders where total > 5',
    );
    await same(
      'insert into items select o.tenant_id, o.total * c.n from orders o join countries c on c.n = o.id where o.total < $1',
      [10],
    );
    await same(
      'insert into items (tenant_id, qty) select tenant_id, sum(total) from orders group by tenant_id',
    );
    // A failing row anywhere: nothing inserted anywhere.
    await same(
      'insert into orders (tenant_id, id, total) select tenant_id, id + 10, total - 15 from orders',
    );
    await sameRows();
  });

  test('not colocated: the rows go through the router to their owners', async () => {
    await same(
      'insert into orders (tenant_id, id, total) select g, 7, g from generate_series(1, 200) g',
    );
    await same(
      'insert into orders (tenant_id, id, total) select k, 8, v from counters where k = 3',
    );
    await same(
      'insert into counters (k, v) select tenant_id + 100, total from orders where tenant_id = 5 and id = 1',
    );
    // node-postgres's batch idiom: arrays of parameters, unnested.
    const ids = Array.from({ length: 40 }, (_, i) => 500 + i);
    await same(
      'insert into orders (tenant_id, id, total) select * from unnest($1::bigint[], $2::int[], $3::int[])',
      [ids, ids.map(() => 1), ids.map((i) => i % 9)],
    );
    // Numeric keys take the key's assignment cast; a duplicate key on one node inserts nothing.
    await same(
      'insert into orders (tenant_id, id, total) select g + 0.4, 9, 1 from generate_series(1, 9) g',
    );
    await same(
      'insert into orders (tenant_id, id, total) select g, 1, 1 from generate_series(28, 40) g',
    );
    // Bare string literals and NULL take their column's type (the key's too), as in Postgres.
    await same(
      "insert into orders (tenant_id, id, total) select '77', g, '5' from generate_series(1, 2) g",
    );
    await same('insert into items (tenant_id, qty) select 78, null from generate_series(1, 2) g');

    await sameRows();
  });

  test('a SELECT across nodes, not colocated: read through the router a chunk at a time', async () => {
    await same(
      `insert into counters (k, v) values ${Array.from({ length: 2500 }, (_, i) => `(${i + 1000}, ${i % 97})`).join(', ')}`,
    );
    await same('insert into orders (tenant_id, id, total) select k, 61, v from counters');
    await same('begin');
    await same(
      'insert into orders (tenant_id, id, total) select k, 62, v + 1 from counters where v > $1 order by k limit 700',
      [3],
    );
    await same(
      'insert into items (tenant_id, qty) select k, count(*) from counters group by k having k % 7 = 0',
    );
    await same('commit');
    await same('insert into orders (tenant_id, id, total) select k, 63, v - 50 from counters');
    await sameRows();
  });

  test('in a transaction: rolled back, then committed', async () => {
    for (const end of ['rollback', 'commit']) {
      await same('begin');
      await same(
        'insert into orders (tenant_id, id, total) select g, 20, g from generate_series(1, 30) g',
      );
      await same(
        'insert into items (tenant_id, qty) select tenant_id, id from orders where id = 20',
      );
      await same(end);
    }
    await sameRows();
  });

  test('what the router cannot do exactly is refused', async () => {
    for (const sql of [
      // A join across nodes the planner cannot answer exactly.
      'insert into orders (tenant_id, id, total) select g, 2, g from generate_series(1, 5) g, counters',
      'insert into orders (tenant_id, id, total) select g, 50, 1 from generate_series(1, 3) g returning *',
      'insert into items (tenant_id, qty) select tenant_id, extract(epoch from now()) from orders',
    ]) {
      const r = await run(viaRouter, sql);
      assert.equal(r.error, '0A000', sql);
    }
    await sameRows();
  });
});
