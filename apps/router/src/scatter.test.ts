// Reads across nodes through the router, end to end: a one-node read stays on the fast path, the
// simple and extended protocols (pg, postgres.js), EXPLAIN [ANALYZE], inside a transaction,
// and an early stop (LIMIT) that cancels the other nodes and leaves every backend reusable.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import postgres from 'postgres';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

let c: TestCluster;
let client: pg.Client;
const ROWS = 20_000;

before(async () => {
  c = await startTestCluster();
  client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query(
    'create table orders (tenant_id bigint not null, id bigint not null, total int, note text)',
  );
  const sql = postgres(c.url(), { max: 1, onnotice: () => undefined });
  for (let i = 0; i < ROWS; i += 2000) {
    const rows = Array.from(
      { length: 2000 },
      (_, k) => `(${i + k}, ${i + k}, ${(i + k) % 10}, 'n${(i + k) % 7}')`,
    );
    await sql.unsafe(`insert into orders (tenant_id, id, total, note) values ${rows.join(', ')}`);
  }
  await sql.end();
});
after(async () => {
  await client?.end();
  await c?.dispose();
});

async function counter(route: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
  const m = new RegExp(`tessera_router_statements_total\\{route="${route}"[^}]*\\} (\\d+)`).exec(
    text,
  );
  return Number(m?.[1] ?? 0);
}

describe('reads across nodes', () => {
  test('a one-node read stays on the fast path (no scatter counted)', async () => {
    const before = await counter('scatter');
    const single = await counter('single');
    await client.query('select * from orders where tenant_id = 5');
    await client.query({ text: 'select * from orders where tenant_id = $1', values: [6] });
    assert.equal(await counter('scatter'), before);
    assert.equal(await counter('single'), single + 2);
    await client.query('select count(*) from orders');
    assert.equal(await counter('scatter'), before + 1);
  });

  test('simple and extended protocol, with parameters', async () => {
    const all = await client.query('select count(*) as n, sum(total) as s from orders');
    assert.deepEqual(all.rows, [{ n: String(ROWS), s: String((ROWS / 10) * 45) }]);
    const top = await client.query({
      text: 'select id from orders where total = $1 order by id desc limit $2 offset $3',
      values: [3, 3, 1],
    });
    assert.deepEqual(
      top.rows.map((r) => r.id),
      [String(ROWS - 17), String(ROWS - 27), String(ROWS - 37)],
    );
    const named = {
      name: 'by-note',
      text: 'select note, count(*) as n from orders where tenant_id = any($1) group by note order by note',
    };
    const r1 = await client.query({ ...named, values: [[1, 2, 3, 8]] });
    const r2 = await client.query({ ...named, values: [[1, 2, 3, 8, 9]] });
    assert.deepEqual(r1.rows, [
      { note: 'n1', n: '2' },
      { note: 'n2', n: '1' },
      { note: 'n3', n: '1' },
    ]);
    assert.deepEqual(r2.rows, [
      { note: 'n1', n: '2' },
      { note: 'n2', n: '2' },
      { note: 'n3', n: '1' },
    ]);
  });

  test('postgres.js (Describe of the statement, then Bind/Execute)', async () => {
    const sql = postgres(c.url(), { max: 2, onnotice: () => undefined });
    try {
      const rows =
        await sql`select total, count(*) as n from orders where total > ${7} group by total order by total`;
      assert.deepEqual(
        rows.map((r) => [r.total, String(r.n)]),
        [
          [8, String(ROWS / 10)],
          [9, String(ROWS / 10)],
        ],
      );
      const [x] = await sql`select max(id) as m from orders where note = ${'n0'}`;
      assert.ok(x && BigInt(x.m as string) > 0n);
    } finally {
      await sql.end();
    }
  });

  test('EXPLAIN shows the plan and the node SQL; EXPLAIN ANALYZE runs it', async () => {
    const plan = await client.query('explain select note, count(*) from orders group by note');
    assert.deepEqual(
      plan.fields.map((f) => f.name),
      ['QUERY PLAN'],
    );
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(text, /FinalAggregate/);
    assert.match(text, /sql: SELECT note, count\(\*\)/);
    assert.match(text, /Nodes: data1, data2/);
    const run = await client.query('explain analyze select id from orders order by id limit 5');
    const ran = run.rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(ran, /Result rows: 5/);
    assert.match(ran, /Node data1: rows=\d+/);
    const one = await client.query('explain select * from orders where tenant_id = 1');
    assert.doesNotMatch(one.rows.map((r) => r['QUERY PLAN']).join('\n'), /Scatter/);
  });

  test('inside a transaction block a read across nodes runs in the transaction', async () => {
    await client.query('begin');
    await client.query('delete from orders where tenant_id = 1');
    assert.equal(
      (await client.query('select count(*) as n from orders')).rows[0].n,
      String(ROWS - 1),
    );
    await client.query('rollback');
    assert.equal((await client.query('select count(*) as n from orders')).rows[0].n, String(ROWS));
  });

  test('refusals and node errors come back as ErrorResponses; the session goes on', async () => {
    await assert.rejects(
      client.query('select id, row_number() over () from orders'),
      (e: { code?: string }) => e.code === '0A000',
    );
    await assert.rejects(
      client.query('select 1 / (total - total) from orders'),
      (e: { code?: string }) => e.code === '22012',
    );
    await assert.rejects(
      client.query({ text: 'select id from orders order by id limit $1', values: [-1] }),
      (e: { code?: string }) => e.code === '2201W',
    );
    assert.equal((await client.query('select 1 as x')).rows[0].x, 1);
  });

  test('LIMIT stops early: other nodes are cancelled and their backends come back clean', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await client.query(
        'select a.id from orders a, orders b where a.tenant_id = b.tenant_id limit 3',
      );
      assert.equal(r.rows.length, 3);
    }
    const r = await client.query('select id from orders order by id limit 2');
    assert.deepEqual(
      r.rows.map((x) => x.id),
      ['0', '1'],
    );
    // Every backend the router holds is idle again: no query left running on the nodes.
    for (const s of c.data) {
      const active = await s.query<{ n: string }>(
        "select count(*) n from pg_stat_activity where state = 'active' and query like '%orders%' and pid <> pg_backend_pid()",
      );
      assert.equal(active[0]!.n, '0');
    }
  });

  test('a large result streams to the client', async () => {
    const r = await client.query('select id, note from orders');
    assert.equal(r.rowCount, ROWS);
  });
});
