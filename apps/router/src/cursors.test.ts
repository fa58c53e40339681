// Cursors over reads across nodes (issue 15), differential against one plain Postgres: portals
// executed with a row limit (pg-cursor, postgres.js cursor(), raw Execute with a limit: rows,
// PortalSuspended and the tags exactly), and SQL cursors (DECLARE / FETCH / MOVE / CLOSE) inside
// transactions through node-postgres (simple and named statements) and postgres.js, with other
// statements between the fetches, savepoints, and one-node cursors declared on a node the
// transaction did not start on. Afterwards no node holds a backend idle in a transaction.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import postgres from 'postgres';
import Cursor from 'pg-cursor';
import {
  BackendCode,
  SYNC,
  Writer,
  decodeCommandComplete,
  decodeDataRow,
  writeBind,
  writeDescribe,
  writeExecute,
  writeParse,
  writeQuery,
} from '@tessera/pg-wire';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { DRIVER_MODES, openDriver, setUpBoth, type Outcome } from './testing/drivers.js';
import { RawClient } from './testing/raw-client.js';

let c: TestCluster;
let plainServer: PgServer;
let plain: pg.Client;
/** A key on data2 (the transactions below start on data1's keys). */
let onData2 = '';
let onData1 = '';

const ROWS = 700;
const SETUP = [
  'create table orders (tenant_id bigint not null, id bigint not null, total int, note text)',
  `insert into orders values ${Array.from(
    { length: ROWS },
    (_, i) => `(${i + 1}, ${i + 1}, ${(i * 7) % 13}, 'n${i % 5}')`,
  ).join(', ')}`,
];

before(async () => {
  [c, plainServer] = await Promise.all([
    startTestCluster(),
    startPostgres({ name: 'cursors-plain' }),
  ]);
  plain = await plainServer.connect();
  await setUpBoth(c.url(), plain, SETUP);
  const first = async (node: string): Promise<string> =>
    (await c.byName.get(node)!.query<{ k: string }>('select min(tenant_id) as k from orders'))[0]!
      .k;
  onData1 = await first('data1');
  onData2 = await first('data2');
});

after(async () => {
  await plain?.end();
  await c?.dispose();
  await plainServer?.dispose();
});

const seen = (o: Outcome): unknown => ({ tag: o.tag, rows: o.rows, sqlstate: o.sqlstate });

function scenarios(): Record<string, string[]> {
  return {
    'FETCH and MOVE forward through an ordered read across nodes': [
      'begin',
      'declare c cursor for select tenant_id, total from orders where total > 3 order by total, tenant_id',
      'fetch 5 from c',
      'fetch next from c',
      'fetch c',
      'move 100 in c',
      'fetch forward 3 from c',
      'fetch all from c',
      'fetch 2 from c',
      'move 1 c',
      'close c',
      'commit',
    ],
    'an aggregate cursor, other statements between the fetches': [
      'begin',
      `select * from orders where tenant_id = ${onData1}`,
      'declare agg no scroll cursor for select note, count(*), sum(total) from orders group by note order by note',
      'fetch 2 from agg',
      `update orders set total = total + 1 where tenant_id = ${onData2}`,
      'select count(*) from orders where total > 10',
      'fetch all from agg',
      'commit',
    ],
    'a long cursor, with statements on its nodes between the fetches': [
      'begin',
      'declare big cursor for select id, total from orders order by id',
      'fetch 300 from big',
      `select * from orders where tenant_id = ${onData1}`,
      `update orders set total = total + 1 where tenant_id = ${onData2}`,
      'fetch 300 from big',
      'select count(*), sum(total) from orders',
      'fetch all from big',
      'rollback',
    ],
    'a one-node cursor declared on a node the transaction did not start on': [
      'begin',
      `select * from orders where tenant_id = ${onData1}`,
      `declare one cursor for select id from orders where tenant_id = ${onData2}`,
      'fetch all in one',
      'close one',
      'commit',
    ],
    'savepoints: a cursor declared after a savepoint goes with ROLLBACK TO': [
      'begin',
      'declare a cursor for select id from orders order by id',
      'fetch 2 from a',
      'savepoint s',
      'declare b cursor for select id from orders order by id desc',
      'fetch 2 from b',
      'rollback to savepoint s',
      'fetch 2 from a',
      'fetch 2 from b',
      'rollback',
    ],
    "CLOSE ALL closes the cursors on the nodes and the router's": [
      'begin',
      'declare a cursor for select id from orders order by id',
      `declare one cursor for select id from orders where tenant_id = ${onData2}`,
      'fetch 1 from a',
      'close all',
      'fetch 1 from one',
      'rollback',
      'begin',
      'declare a cursor for select id from orders order by id',
      'close all',
      'fetch 1 from a',
      'rollback',
    ],
    'WITH HOLD cursors: outside a transaction, committed, rolled back, discarded': [
      'declare h cursor with hold for select id, note from orders order by note, id',
      'fetch 300 from h',
      'select count(*) from orders',
      `update orders set total = total where tenant_id = ${onData1}`,
      'fetch all from h',
      'close h',
      'begin',
      'declare h2 cursor with hold for select note, count(*) from orders group by note order by note',
      'fetch 2 from h2',
      'commit',
      'fetch 2 from h2',
      'begin',
      'declare h3 cursor with hold for select id from orders order by id',
      'rollback',
      'fetch 1 from h3',
      'begin',
      'fetch 1 from h2',
      'rollback',
      'fetch all from h2',
      'declare h4 cursor with hold for select id from orders order by id',
      'discard all',
      'fetch 1 from h4',
    ],
    'errors: outside a transaction, an unknown cursor, a duplicate name': [
      'declare c cursor for select id from orders order by id',
      'begin',
      'fetch 1 from nosuch',
      'rollback',
      'begin',
      'declare c cursor for select id from orders order by id',
      'declare c cursor for select id from orders order by id',
      'rollback',
      'begin',
      'declare c cursor for select id from orders order by id limit 3',
      'fetch all from c',
      'close c',
      'fetch 1 from c',
      'rollback',
    ],
  };
}

/** Backends on the data nodes left in a transaction (none may stay once the clients are done). */
async function idleInTransaction(): Promise<number> {
  let n = 0;
  for (const node of c.data)
    n += Number(
      (
        await node.query<{ n: string }>(
          "select count(*) as n from pg_stat_activity where state like 'idle in transaction%' and backend_type = 'client backend'",
        )
      )[0]!.n,
    );
  return n;
}

/** Sessions of the router with a backend kept for them (WITH HOLD cursors pin theirs). */
async function pinnedSessions(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
  return Number(/^tessera_router_pinned_sessions (\d+)/m.exec(text)?.[1] ?? 0);
}

describe('SQL cursors over reads across nodes, differential', () => {
  for (const mode of DRIVER_MODES)
    test(`${mode}: every scenario`, async () => {
      for (const [name, statements] of Object.entries(scenarios())) {
        const router = await openDriver(mode, c.url());
        const direct = await openDriver(mode, plainServer.url());
        try {
          for (const sql of statements) {
            const [r, p] = [await router.run(sql), await direct.run(sql)];
            assert.deepEqual(seen(r), seen(p), `${name}: ${sql}\nrouter: ${r.message ?? ''}`);
          }
        } finally {
          await router.end();
          await direct.end();
        }
      }
      assert.equal(await idleInTransaction(), 0);
      assert.equal(await pinnedSessions(), 0);
    });

  test('backward fetches are refused (0A000): the router reads forward only', async () => {
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('declare c cursor for select id from orders order by id');
      await client.query('fetch 2 from c');
      await assert.rejects(client.query('fetch backward 1 from c'), { code: '0A000' });
      await client.query('rollback');
      await client.query('begin');
      await assert.rejects(
        client.query('declare s scroll cursor for select id from orders order by id'),
        { code: '0A000' },
      );
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });
});

describe('portals executed with a row limit, differential', () => {
  const QUERY = 'select tenant_id, note from orders where total <> $1 order by note, tenant_id';

  async function readAll(url: string, inTxn: boolean): Promise<unknown[][]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      if (inTxn) await client.query('begin');
      const cursor = client.query(new Cursor(QUERY, [5]));
      const chunks: unknown[][] = [];
      for (;;) {
        const rows = await cursor.read(97);
        chunks.push(rows);
        if (rows.length === 0) break;
      }
      await cursor.close();
      if (inTxn) {
        chunks.push((await client.query('select count(*) from orders')).rows);
        await client.query('commit');
      }
      return chunks;
    } finally {
      await client.end();
    }
  }

  for (const inTxn of [false, true])
    test(`pg-cursor ${inTxn ? 'inside' : 'outside'} a transaction`, async () => {
      assert.deepEqual(await readAll(c.url(), inTxn), await readAll(plainServer.url(), inTxn));
      assert.equal(await idleInTransaction(), 0);
    });

  test('postgres.js cursor()', async () => {
    const read = async (url: string): Promise<unknown[]> => {
      const sql = postgres(url, { max: 1, onnotice: () => undefined });
      const out: unknown[] = [];
      try {
        for await (const rows of sql`select id, total from orders where id > ${10} order by total desc, id`.cursor(
          64,
        ))
          out.push(rows.map((r) => ({ ...r })));
      } finally {
        await sql.end();
      }
      return out;
    };
    assert.deepEqual(await read(c.url()), await read(plainServer.url()));
  });

  test("a Describe of an SQL cursor's portal (psycopg 3 server cursors) as Postgres answers it", async () => {
    const trace = async (port: number): Promise<string> => {
      const client = await RawClient.login(port);
      const w = new Writer();
      writeQuery(w, 'begin');
      writeQuery(w, 'declare big cursor for select id, note from orders order by id');
      writeQuery(w, `declare one cursor for select id from orders where tenant_id = ${onData2}`);
      for (const name of ['big', 'one', 'nosuch']) {
        writeDescribe(w, 'P', name);
        w.bytes(SYNC);
      }
      writeQuery(w, 'rollback');
      client.send(w.flush());
      const frames: string[] = [];
      for (let i = 0; i < 7; i++)
        for (const f of await client.until((x) => x.code === BackendCode.ReadyForQuery))
          frames.push(String.fromCharCode(f.code));
      client.socket.destroy();
      return frames.join('');
    };
    assert.equal(await trace(c.router.port), await trace(plainServer.port));
  });

  test('raw Execute with a limit: rows, PortalSuspended and tags as Postgres sends them', async () => {
    const trace = async (port: number): Promise<string> => {
      const client = await RawClient.login(port);
      const w = new Writer();
      writeParse(w, '', 'select id from orders where id <= 6 order by id');
      writeBind(w, { portal: 'p' });
      writeDescribe(w, 'P', 'p');
      for (const n of [2, 3, 1, 2, 0]) writeExecute(w, 'p', n);
      w.bytes(SYNC);
      writeQuery(w, 'select 1');
      client.send(w.flush());
      const frames = await client.until((f) => f.code === BackendCode.ReadyForQuery);
      await client.until((f) => f.code === BackendCode.ReadyForQuery);
      client.socket.destroy();
      return frames
        .map((f) =>
          f.code === BackendCode.DataRow
            ? `D${decodeDataRow(f.body)[0]?.toString()}`
            : f.code === BackendCode.CommandComplete
              ? `C:${decodeCommandComplete(f.body)}`
              : String.fromCharCode(f.code),
        )
        .join(' ');
    };
    assert.equal(await trace(c.router.port), await trace(plainServer.port));
  });
});
