// Reads across nodes inside transaction blocks (issue 15), differential: the same sequences
// through node-postgres (simple and named statements) and postgres.js against the router (two
// data nodes) and one plain Postgres, every statement's tag, rows and SQLSTATE compared. Then
// what only the router can show: the read joins each node's part of the transaction (its own
// uncommitted writes are seen, a read-only part commits without two-phase commit), now() is the
// transaction's on every node, an early stop leaves the transaction usable, and SERIALIZABLE is
// refused once a transaction would span nodes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { DRIVER_MODES, openDriver, setUpBoth, type Outcome } from './testing/drivers.js';

let c: TestCluster;
let plainServer: PgServer;
let plain: pg.Client;
/** An IN list of two keys on different nodes. */
let twoNodes = '';

/** One instant for both sides' rows (now() would differ between the two servers). */
const NOW = new Date().toISOString();

const SETUP = [
  'create table orders (tenant_id bigint not null, id bigint not null, total int, created timestamptz)',
  'create table countries (code text primary key, name text)',
  `insert into orders values ${Array.from(
    { length: 200 },
    (_, i) =>
      `(${i + 1}, ${i + 1}, ${(i + 1) % 10}, '${NOW}'::timestamptz - ${(i + 1) % 3} * interval '1 day')`,
  ).join(', ')}`,
  "insert into countries values ('fr', 'France'), ('de', 'Germany')",
];

/** Sequences of statements run in one session on both sides; each ends outside a transaction. */
const SCENARIOS: Record<string, string[]> = {
  'reads across nodes, then a write, then reads again, committed': [
    'begin',
    'select count(*), sum(total) from orders',
    'select * from orders where tenant_id = 7',
    'update orders set total = total + 100 where tenant_id in (3, 150)',
    'select count(*) filter (where total >= 100) as big, max(total) from orders',
    'select tenant_id, total from orders order by total desc, tenant_id limit 3',
    'commit',
    'select sum(total) from orders',
    'update orders set total = total - 100 where tenant_id in (3, 150)',
  ],
  'its own uncommitted inserts on several nodes are read, then rolled back': [
    'begin',
    'insert into orders (tenant_id, id, total) values (1001, 1, 5), (1002, 2, 6), (1003, 3, 7), (1004, 4, 8)',
    'select count(*), sum(total) from orders where tenant_id > 1000',
    'select tenant_id from orders where tenant_id > 1000 order by tenant_id',
    'rollback',
    'select count(*) from orders where tenant_id > 1000',
  ],
  'an error in a read across nodes fails the transaction until ROLLBACK': [
    'begin',
    'select count(*) from orders',
    'select sum(10 / (total - 4)) from orders',
    'select count(*) from orders',
    'commit',
    'select count(*) from orders',
  ],
  'a read across nodes as the first statement, with LIMIT, then more': [
    'begin',
    'select id from orders order by id limit 3',
    'select id from orders order by id desc limit 2 offset 1',
    'select * from countries order by code',
    'select count(*) from orders o join countries c on true',
    'commit',
  ],
  'savepoints around reads across nodes': [
    'begin',
    'insert into orders (tenant_id, id, total) values (2001, 1, 1)',
    'savepoint a',
    'insert into orders (tenant_id, id, total) values (2002, 2, 2), (2003, 3, 3)',
    'select count(*) from orders where tenant_id > 2000',
    'rollback to savepoint a',
    'select count(*) from orders where tenant_id > 2000',
    'select 1 / 0 from orders where tenant_id > 2000',
    'rollback to savepoint a',
    'select count(*) from orders where tenant_id > 2000',
    'release savepoint a',
    'rollback',
    'select count(*) from orders where tenant_id > 2000',
  ],
  'the transaction time across nodes': [
    'begin',
    "select count(*) from orders where created > now() - interval '36 hours'",
    'select count(*) from orders where created::date >= current_date - 1 and created <= current_timestamp',
    'commit',
  ],
  'repeatable read and read only': [
    'begin isolation level repeatable read read only',
    'select count(*) from orders',
    'show transaction_isolation',
    'select max(id) from orders',
    'commit',
    'start transaction isolation level read committed',
    'select count(*) from orders',
    'end',
  ],
};

before(async () => {
  [c, plainServer] = await Promise.all([
    startTestCluster(),
    startPostgres({ name: 'txn-reads-plain' }),
  ]);
  plain = await plainServer.connect();
  await setUpBoth(c.url(), plain, SETUP);
  const first = async (node: string): Promise<string> =>
    (await c.byName.get(node)!.query<{ k: string }>('select min(tenant_id) as k from orders'))[0]!
      .k;
  twoNodes = `(${await first('data1')}, ${await first('data2')})`;
});

after(async () => {
  await plain?.end();
  await c?.dispose();
  await plainServer?.dispose();
});

/** What is compared: the tag, rows and SQLSTATE of each statement. */
const seen = (o: Outcome): unknown => ({ tag: o.tag, rows: o.rows, sqlstate: o.sqlstate });

async function metric(name: string, label = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(name) && line.includes(label)) sum += Number(line.split(' ').at(-1));
  return sum;
}

describe('reads across nodes inside transactions, differential', () => {
  for (const mode of DRIVER_MODES)
    for (const [name, statements] of Object.entries(SCENARIOS))
      test(`${mode}: ${name}`, async () => {
        const router = await openDriver(mode, c.url());
        const direct = await openDriver(mode, plainServer.url());
        try {
          for (const sql of statements) {
            const [r, p] = [await router.run(sql), await direct.run(sql)];
            assert.deepEqual(seen(r), seen(p), `${sql}\nrouter: ${r.message ?? ''}`);
          }
        } finally {
          await router.end();
          await direct.end();
        }
      });
});

describe('reads across nodes inside transactions, through the router', () => {
  test('a read-only part commits without two-phase commit; writes on two nodes use it', async () => {
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    try {
      const before = await metric('tessera_router_2pc_total');
      await client.query('begin');
      await client.query('select count(*) from orders');
      await client.query('update orders set total = total where tenant_id = 5');
      await client.query('commit');
      assert.equal(await metric('tessera_router_2pc_total'), before);
      await client.query('begin');
      await client.query('select count(*) from orders');
      await client.query(`update orders set total = total where tenant_id in ${twoNodes}`);
      await client.query('commit');
      assert.equal(await metric('tessera_router_2pc_total'), before + 1);
    } finally {
      await client.end();
    }
  });

  test("now() across nodes is the transaction's own, as on its first node", async () => {
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    try {
      await client.query('begin');
      const first = await client.query('select now()::text as t from orders where tenant_id = 5');
      await new Promise((r) => setTimeout(r, 20));
      const across = await client.query(
        'select count(*) filter (where now() = $1::timestamptz) as same, count(*) as n from orders',
        [first.rows[0].t],
      );
      await client.query('commit');
      assert.equal(across.rows[0].same, across.rows[0].n);
      assert.equal(across.rows[0].n, '200');
    } finally {
      await client.end();
    }
  });

  test('an early stop inside a transaction leaves every part usable', async () => {
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    try {
      await client.query('begin');
      for (let i = 0; i < 5; i++) {
        const r = await client.query('select id from orders where total >= 0 limit 1');
        assert.equal(r.rows.length, 1);
      }
      const n = await client.query('select count(*) from orders');
      assert.equal(n.rows[0].count, '200');
      await client.query('commit');
    } finally {
      await client.end();
    }
  });

  test('SERIALIZABLE is refused once the transaction would span nodes', async () => {
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    try {
      await client.query('begin isolation level serializable');
      await client.query('select * from orders where tenant_id = 5');
      await assert.rejects(client.query('select count(*) from orders'), (e: Error) => {
        const err = e as Error & { code?: string };
        return err.code === '0A000' && /SERIALIZABLE/.test(err.message);
      });
      await client.query('rollback');
      await client.query('set default_transaction_isolation = serializable');
      await client.query('begin');
      await assert.rejects(
        client.query(`update orders set total = total where tenant_id in ${twoNodes}`),
        (e: Error) => (e as Error & { code?: string }).code === '0A000',
      );
      await client.query('rollback');
      await client.query('begin');
      await client.query('set transaction isolation level read committed');
      const r = await client.query('select count(*) from orders');
      assert.equal(r.rows[0].count, '200');
      await client.query('commit');
      await client.query('reset default_transaction_isolation');
      // One node is fine: Postgres keeps SERIALIZABLE's promise there.
      await client.query('begin isolation level serializable');
      await client.query('select * from orders where tenant_id = 5');
      await client.query('update orders set total = total where tenant_id = 5');
      await client.query('commit');
    } finally {
      await client.end();
    }
  });
});
