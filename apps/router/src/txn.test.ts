// Transactions across nodes through the router: a one-node transaction never prepares nor calls
// the coordinator (counted); one that wrote on several commits on all or none (two-phase), a
// deferred unique violation at COMMIT reaching the client as 23505 with nothing left anywhere;
// UPDATE/DELETE across nodes, multi-row INSERT and COPY spanning nodes, reference writes and DDL
// atomic; savepoints replayed on every node, including one that joins later.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import postgres from 'postgres';
import {
  BackendCode,
  Writer,
  decodeCommandComplete,
  decodeErrorResponse,
  writeQuery,
} from '@tessera/pg-wire';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { keysByNode, metricSum } from './testing/keys.js';
import { RawClient } from './testing/raw-client.js';

let c: TestCluster;
/** Tenant keys owned by each data node, from the router's catalog. */
let keys = new Map<string, number[]>();
let client: pg.Client;

before(async () => {
  c = await startTestCluster();
  keys = keysByNode(c.router, 'orders');
  // Ranges live on the data nodes; home holds reference copies (a third node in a transaction).
  assert.deepEqual([...keys.keys()].sort(), ['data1', 'data2']);
  client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query(
    `create table orders (tenant_id bigint not null, id int not null, total int not null check (total >= 0),
       unique (tenant_id, id) deferrable initially deferred)`,
  );
  await client.query('create table countries (code text primary key, name text not null)');
});
after(async () => {
  await client?.end();
  await c?.dispose();
});

const key = (node: string, i = 0): number => keys.get(node)![i]!;

/** Rows of `sql` (one count column) summed over every node, read directly. */
async function onNodes(sql: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [name, server] of c.byName)
    out.set(name, Number((await server.query<{ n: string }>(sql))[0]!.n));
  return out;
}
const total = (m: Map<string, number>): number => [...m.values()].reduce((x, y) => x + y, 0);

async function prepared(): Promise<number> {
  return total(await onNodes('select count(*) n from pg_prepared_xacts'));
}

const twoPhaseCount = (): Promise<number> =>
  metricSum(c.router.metricsPort, /^tessera_router_2pc_total\{/);
const decideCalls = (): Promise<number> =>
  metricSum(c.coordinator.metricsPort, /^tessera_grpc_server_calls_total\{.*method="Decide"/);

/** COPY orders FROM STDIN with `rows` as one CopyData: the errors and the tag the client saw. */
async function rawCopy(raw: RawClient, rows: string): Promise<{ errors: string[]; tag?: string }> {
  raw.send(writeQuery(new Writer(), 'copy orders (tenant_id, id, total) from stdin').flush());
  await raw.until((f) => f.code === BackendCode.CopyInResponse); // CopyInResponse
  const data = Buffer.from(rows);
  const frame = Buffer.alloc(5 + data.length);
  frame[0] = 0x64;
  frame.writeInt32BE(4 + data.length, 1);
  data.copy(frame, 5);
  raw.send(frame);
  raw.send(Buffer.from([0x63, 0, 0, 0, 4])); // CopyDone
  return answer(await raw.until((f) => f.code === BackendCode.ReadyForQuery, 10_000));
}

async function rawSimple(raw: RawClient, sql: string): Promise<void> {
  raw.send(writeQuery(new Writer(), sql).flush());
  const a = answer(await raw.until((f) => f.code === BackendCode.ReadyForQuery));
  assert.deepEqual(a.errors, [], sql);
}

function answer(frames: { code: number; body: Buffer }[]): { errors: string[]; tag?: string } {
  const errors = frames
    .filter((f) => f.code === BackendCode.ErrorResponse)
    .map((f) => decodeErrorResponse(f.body).code);
  const cc = frames.find((f) => f.code === BackendCode.CommandComplete);
  return cc ? { errors, tag: decodeCommandComplete(cc.body) } : { errors };
}

async function reset(): Promise<void> {
  await client.query('rollback'); // a test that failed midway may have left one open
  await client.query('delete from orders');
  await client.query('delete from countries');
}

describe('transactions across nodes', () => {
  test('a one-node transaction (even reading elsewhere) makes no PREPARE and no coordinator call', async () => {
    await reset();
    const before2pc = await twoPhaseCount();
    const beforeDecide = await decideCalls();
    await client.query('begin');
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 1, 10)`);
    await client.query(`update orders set total = 11 where tenant_id = ${key('data1')}`);
    await client.query('commit');
    // Reads on another node, writes on one: plain COMMITs only.
    await client.query('begin');
    await client.query(`select * from orders where tenant_id = ${key('data2')}`);
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 2, 10)`);
    await client.query(`select * from countries`);
    await client.query('commit');
    assert.equal(await twoPhaseCount(), before2pc);
    assert.equal(await decideCalls(), beforeDecide);
    // The counters do count: a transaction that wrote on two nodes moves both.
    await client.query('begin');
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 3, 10)`);
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data2')}, 3, 10)`);
    await client.query('commit');
    assert.equal(await twoPhaseCount(), before2pc + 1);
    assert.equal(await decideCalls(), beforeDecide + 1);
    assert.equal(total(await onNodes('select count(*) n from orders')), 4);
  });

  test('writes on three nodes and a reference table commit everywhere; a deferred unique violation at COMMIT commits nothing', async () => {
    await reset();
    await client.query('begin');
    await client.query(
      `insert into orders (tenant_id, id, total) values (${key('data1', 1)}, 1, 5)`,
    );
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data2')}, 1, 5)`);
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 1, 5)`);
    await client.query(`insert into countries (code, name) values ('fr', 'France')`);
    await client.query('commit');
    const rows = await onNodes('select count(*) n from orders');
    assert.deepEqual(Object.fromEntries(rows), { home: 0, data1: 2, data2: 1 });
    assert.deepEqual([...(await onNodes('select count(*) n from countries')).values()], [1, 1, 1]);

    await client.query('begin');
    await client.query(
      `insert into orders (tenant_id, id, total) values (${key('data2', 2)}, 2, 5)`,
    );
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data2')}, 2, 5)`);
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 1, 7)`); // duplicate, deferred
    await client.query(`update countries set name = 'République française'`);
    await assert.rejects(client.query('commit'), (e: { code?: string }) => e.code === '23505');
    assert.equal(total(await onNodes('select count(*) n from orders')), 3);
    assert.equal(total(await onNodes(`select count(*) n from countries where name = 'France'`)), 3);
    assert.equal(await prepared(), 0);
    // The session goes on.
    assert.equal((await client.query('select 1 as x')).rows[0].x, 1);
  });

  test('UPDATE and DELETE across nodes, alone and in a transaction, count every node', async () => {
    await reset();
    const values = [...keys.values()].flatMap((ks) => ks.slice(0, 3)).map((k) => `(${k}, 1, 1)`);
    values.push(
      `(${key('data1', 3)}, 1, 1)`,
      `(${key('data1', 4)}, 1, 1)`,
      `(${key('data1', 5)}, 1, 1)`,
    );
    await client.query(`insert into orders (tenant_id, id, total) values ${values.join(', ')}`);
    const up = await client.query('update orders set total = total + 1');
    assert.equal(up.command, 'UPDATE');
    assert.equal(up.rowCount, 9);
    const some = [key('data1', 1), key('data1'), key('data2', 1)];
    const ret = await client.query(
      `update orders set total = 10 where tenant_id in (${some.join(', ')}) returning tenant_id`,
    );
    assert.equal(ret.rowCount, 3);
    assert.deepEqual(ret.rows.map((r) => Number(r.tenant_id)).sort(), [...some].sort());
    await client.query('begin');
    const del = await client.query('delete from orders where total = 2');
    assert.equal(del.rowCount, 6);
    await client.query('rollback');
    assert.equal(total(await onNodes('select count(*) n from orders')), 9);
    await client.query('begin');
    assert.equal((await client.query('delete from orders where total = 2')).rowCount, 6);
    await client.query('commit');
    assert.equal(total(await onNodes('select count(*) n from orders')), 3);
    // Changing the key column stays refused.
    await assert.rejects(
      client.query('update orders set tenant_id = 1'),
      (e: { code?: string }) => e.code === '0A000',
    );
    // A failing row on one node: nothing changes anywhere.
    await assert.rejects(
      client.query(
        `update orders set total = total - 10 - (case when tenant_id = ${key('data2', 1)} then 1 else 0 end) where tenant_id in (${some.join(', ')})`,
      ),
      (e: { code?: string }) => e.code === '23514',
    );
    assert.equal(total(await onNodes('select count(*) n from orders where total = 10')), 3);
    assert.equal(await prepared(), 0);
  });

  test('a multi-row INSERT or a COPY spanning nodes with one bad row commits nothing', async () => {
    await reset();
    const rows = [key('data1', 1), key('data1'), key('data2')].map((k) => `(${k}, 1, 1)`);
    await assert.rejects(
      client.query(
        `insert into orders (tenant_id, id, total) values ${rows.join(', ')}, (${key('data2', 1)}, 1, -1)`,
      ),
      (e: { code?: string }) => e.code === '23514',
    );
    assert.equal(total(await onNodes('select count(*) n from orders')), 0);
    // Inside a transaction it fails the transaction, as one Postgres would.
    await client.query('begin');
    await client.query(
      `insert into orders (tenant_id, id, total) values (${key('data1', 2)}, 9, 9)`,
    );
    await assert.rejects(
      client.query(
        `insert into orders (tenant_id, id, total) values ${rows.join(', ')}, (${key('data1', 1)}, 1, -1)`,
      ),
      (e: { code?: string }) => e.code === '23514',
    );
    await assert.rejects(
      client.query(`insert into orders (tenant_id, id, total) values (${key('data1', 3)}, 9, 9)`),
      (e: { code?: string }) => e.code === '25P02',
    );
    await client.query('commit'); // a failed transaction's COMMIT rolls back
    assert.equal(total(await onNodes('select count(*) n from orders')), 0);

    // COPY by the bare protocol (postgres.js never settles a COPY the server failed).
    const raw = await RawClient.login(c.router.port);
    const data = [...keys.values()].flatMap((ks) => ks.slice(0, 5)).map((k) => `${k}\t1\t1\n`);
    data.push(
      ...keys
        .get('data1')!
        .slice(5, 10)
        .map((k) => `${k}\t1\t1\n`),
    );
    const bad = await rawCopy(raw, data.join('') + `${key('data1', 11)}\t1\t-5\n`);
    assert.deepEqual(bad.errors, ['23514']);
    assert.equal(total(await onNodes('select count(*) n from orders')), 0);
    const good = await rawCopy(raw, data.join(''));
    assert.deepEqual(good, { errors: [], tag: 'COPY 15' });
    assert.equal(total(await onNodes('select count(*) n from orders')), 15);
    // COPY inside a transaction, rolled back with it.
    await rawSimple(raw, 'begin');
    const inTxn = await rawCopy(raw, `${key('data1', 12)}\t2\t2\n${key('data2', 12)}\t2\t2\n`);
    assert.deepEqual(inTxn, { errors: [], tag: 'COPY 2' });
    await rawSimple(raw, 'rollback');
    assert.equal(total(await onNodes('select count(*) n from orders')), 15);
    raw.end();
    assert.equal(await prepared(), 0);
  });

  test('savepoints run on every node, and on a node that joins after them', async () => {
    await reset();
    await client.query('begin');
    await client.query(
      `insert into orders (tenant_id, id, total) values (${key('data1', 1)}, 1, 1)`,
    );
    await client.query('savepoint a');
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 1, 1)`);
    await client.query('rollback to savepoint a');
    // data2 and home (the reference copies) join now: savepoint a must exist there too.
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data2')}, 1, 1)`);
    await client.query(`insert into countries (code, name) values ('es', 'Spain')`);
    await client.query('savepoint b');
    await assert.rejects(
      client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 2, -1)`),
      (e: { code?: string }) => e.code === '23514',
    );
    await assert.rejects(
      client.query(`select * from orders where tenant_id = ${key('data2')}`),
      (e: { code?: string }) => e.code === '25P02',
    );
    await client.query('rollback to b');
    await client.query('release a');
    await client.query(`insert into orders (tenant_id, id, total) values (${key('data1')}, 3, 1)`);
    await client.query('commit');
    const rows = await onNodes('select count(*) n from orders');
    assert.deepEqual(Object.fromEntries(rows), { home: 0, data1: 2, data2: 1 });
    assert.deepEqual([...(await onNodes('select count(*) n from countries')).values()], [1, 1, 1]);
    assert.equal(await prepared(), 0);
  });

  test('the extended protocol (postgres.js): bound statements on two nodes, a savepoint, commit', async () => {
    await reset();
    const before2pc = await twoPhaseCount();
    const sql = postgres(c.url(), { max: 1, onnotice: () => undefined });
    const ins = 'insert into orders (tenant_id, id, total) values ($1, $2, $3)';
    await sql.begin(async (tx) => {
      await tx.unsafe(ins, [key('data1'), 1, 1]);
      await tx.unsafe(ins, [key('data2'), 1, 1]);
      await tx
        .savepoint(async (sp) => {
          await sp.unsafe(ins, [key('data2', 1), 1, 1]);
          await sp.unsafe(ins, [key('data1', 1), 1, -1]); // fails: the savepoint rolls back
        })
        .catch((e: { code?: string }) => assert.equal(e.code, '23514'));
      await tx.unsafe('update orders set total = total + 1');
    });
    assert.deepEqual(
      Object.fromEntries(await onNodes('select count(*) n from orders where total = 2')),
      { home: 0, data1: 1, data2: 1 },
    );
    assert.equal(total(await onNodes('select count(*) n from orders')), 2);
    assert.equal(await twoPhaseCount(), before2pc + 1);
    await sql.end();
  });

  test('SET LOCAL and BEGIN options reach a node that joins later', async () => {
    await client.query('begin isolation level repeatable read');
    await client.query(`select * from orders where tenant_id = ${key('data1')}`);
    await client.query(`set local statement_timeout = '1234ms'`);
    await client.query(
      `insert into orders (tenant_id, id, total) values (${key('data2', 20)}, 1, 1)`,
    );
    const iso = await client.query(
      `select current_setting('transaction_isolation') iso, current_setting('statement_timeout') st from orders where tenant_id = ${key('data2', 20)}`,
    );
    assert.deepEqual(iso.rows[0], { iso: 'repeatable read', st: '1234ms' });
    await client.query('rollback');
  });

  test('reference copies that disagree abort the write; DDL is atomic on every node', async () => {
    await reset();
    await client.query(
      `insert into countries (code, name) values ('de', 'Germany'), ('it', 'Italy')`,
    );
    await c.byName.get('data2')!.query(`delete from countries where code = 'it'`);
    await assert.rejects(
      client.query(`update countries set name = upper(name)`),
      (e: { code?: string; message: string }) =>
        e.code === 'XX001' && /disagree/.test(e.message) && /data2/.test(e.message),
    );
    assert.equal(
      total(await onNodes(`select count(*) n from countries where name = 'GERMANY'`)),
      0,
    );

    // A table already present on one node: CREATE TABLE fails there and exists nowhere else.
    await c.byName.get('data1')!.query('create table order_items (tenant_id bigint, x int)');
    await assert.rejects(
      client.query('create table order_items (tenant_id bigint not null, item int)'),
      (e: { code?: string }) => e.code === '42P07',
    );
    assert.equal(
      total(await onNodes(`select count(*) n from pg_tables where tablename = 'order_items'`)),
      1,
    );
    assert.equal(await prepared(), 0);
  });
});
