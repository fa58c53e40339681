// Protocol fidelity against one plain Postgres: a cancel of a statement running on several nodes
// reaches every node (57014 within about a second), a FATAL from a node closes the client's
// connection after the error as Postgres does, LOCK TABLE on reference, global and sharded tables,
// and COPY FROM's error CONTEXT counting the client's lines.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  BackendCode,
  Writer,
  decodeErrorResponse,
  writeCopyData,
  writeCopyDone,
  writeQuery,
} from '@tessera/pg-wire';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { keysByNode } from '../testing/keys.js';
import { keyOf, sendCancel } from '../testing/cancel.js';
import { RawClient } from '../testing/raw-client.js';

let c: TestCluster;
let plain: PgServer;
let keys: number[];

const SETUP = [
  'create table orders (tenant_id bigint not null, id int not null)',
  'create table countries (code text primary key, name text)',
  'create table notes (id int primary key, body text)',
  "insert into countries values ('fr', 'France')",
  "insert into notes values (1, 'one')",
];

before(async () => {
  [c, plain] = await Promise.all([startTestCluster({}), startPostgres({ name: 'fidelity-plain' })]);
  const byNode = keysByNode(c.router, 'orders');
  const d1 = byNode.get('data1')!;
  const d2 = byNode.get('data2')!;
  keys = [d1[0]!, d2[0]!, d1[1]!];
  const rows = `insert into orders (tenant_id, id) values ${keys.map((k) => `(${k}, 1)`).join(', ')}`;
  const r = new pg.Client({ connectionString: c.url() });
  await r.connect();
  for (const sql of [...SETUP, rows]) await r.query(sql);
  await r.end();
  for (const sql of [...SETUP, rows]) await plain.query(sql);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const routerUrl = (): string => c.url();

async function connect(url: string): Promise<pg.Client> {
  const cl = new pg.Client({ connectionString: url });
  cl.on('error', () => undefined);
  await cl.connect();
  return cl;
}

/**
 * Holds ACCESS EXCLUSIVE on orders on each of `servers` from another session for 10 s: a read
 * or write of orders waits that long on every node, as a long statement would run.
 */
async function blockOrders(servers: readonly PgServer[]): Promise<() => Promise<void>> {
  const blockers = await Promise.all(
    servers.map(async (srv) => {
      const b = await connect(srv.url());
      await b.query('begin');
      await b.query('lock table orders in access exclusive mode');
      return b;
    }),
  );
  let released: Promise<void> | undefined;
  const release = (): Promise<void> =>
    (released ??= Promise.all(blockers.map((b) => b.query('rollback').then(() => b.end()))).then(
      () => undefined,
    ));
  const timer = setTimeout(() => void release(), 10_000);
  return () => {
    clearTimeout(timer);
    return release();
  };
}

/** Runs `sql` while orders is locked, cancels it after `afterMs`: SQLSTATE, time to answer. */
async function cancelled(
  url: string,
  port: number,
  servers: readonly PgServer[],
  sql: string,
  afterMs: number,
): Promise<{ sqlstate: string | undefined; answeredMs: number }> {
  const cl = await connect(url);
  const release = await blockOrders(servers);
  try {
    const { pid, secret } = keyOf(cl);
    const q = cl.query(sql).then(
      () => undefined,
      (e: { code?: string }) => e.code ?? 'no code',
    );
    await new Promise((r) => setTimeout(r, afterMs));
    const cancelledAt = Date.now();
    await sendCancel(port, pid, secret);
    const sqlstate = await q;
    return { sqlstate, answeredMs: Date.now() - cancelledAt };
  } finally {
    await release();
    await cl.end().catch(() => undefined);
  }
}

describe('cancel reaches every node working for the statement', () => {
  for (const [name, sql] of [
    ['a 10 s read over every node', 'select tenant_id from orders order by tenant_id'],
    ['a 10 s count over every node', 'select count(*) from orders'],
    ['a 10 s write on every node', 'update orders set id = id'],
  ] as const) {
    test(`${name}: 57014 within about a second, as Postgres`, async () => {
      const viaPlain = await cancelled(plain.url(), plain.port, [plain], sql, 1000);
      const viaRouter = await cancelled(
        routerUrl(),
        c.router.port,
        [...c.byName.values()],
        sql,
        1000,
      );
      assert.equal(viaPlain.sqlstate, '57014');
      assert.equal(viaRouter.sqlstate, viaPlain.sqlstate);
      // About a second on an idle machine; the margin is for a loaded one.
      assert.ok(
        viaRouter.answeredMs < 4000,
        `answered ${viaRouter.answeredMs} ms after the cancel`,
      );
      // The backends were cancelled, not left running: the client goes on.
      const cl = await connect(routerUrl());
      const r = await cl.query('select count(*) as n from orders');
      assert.equal(Number(r.rows[0].n), 3);
      await cl.end();
    });
  }
});

/** What a client sees of `steps` on a raw connection: its errors (severity, code), then closed? */
async function fatalSeen(
  port: number,
  steps: readonly string[],
  during?: (raw: RawClient) => Promise<void>,
): Promise<{ errors: string[]; closed: boolean }> {
  const raw = await RawClient.login(port);
  const errors: string[] = [];
  try {
    for (const sql of steps) {
      raw.send(writeQuery(new Writer(), sql).flush());
      const frames = await raw.until((f) => f.code === BackendCode.ReadyForQuery).catch(() => []);
      for (const f of frames)
        if (f.code === BackendCode.ErrorResponse) {
          const e = decodeErrorResponse(f.body);
          errors.push(`${e.severity} ${e.code}`);
        }
      if (raw.closed) break;
    }
    if (!raw.closed) await during?.(raw);
    const closed = await raw.closedWithin(5000);
    errors.push(...raw.errorsWithSeverity());
    return { errors, closed };
  } finally {
    raw.end();
  }
}

describe('a FATAL from a node closes the client connection, as Postgres does', () => {
  test('the client terminates its own backend', async () => {
    const steps = ['select pg_terminate_backend(pg_backend_pid())', 'select 1'];
    const viaPlain = await fatalSeen(plain.port, steps);
    const viaRouter = await fatalSeen(c.router.port, steps);
    assert.deepEqual(viaPlain, { errors: ['FATAL 57P01'], closed: true });
    assert.deepEqual(viaRouter, viaPlain);
  });
  test('idle_in_transaction_session_timeout ends the session', async () => {
    const steps = ['set idle_in_transaction_session_timeout = 300', 'begin', 'select 1'];
    const wait = async (): Promise<void> => {
      await new Promise((r) => setTimeout(r, 1500));
    };
    const viaPlain = await fatalSeen(plain.port, steps, wait);
    const viaRouter = await fatalSeen(c.router.port, steps, wait);
    assert.deepEqual(viaPlain.closed, true);
    assert.deepEqual(viaRouter, viaPlain);
  });
  test('another session terminates the backend of an open transaction', async () => {
    const kill = (server: PgServer) => async (raw: RawClient) => {
      raw.send(writeQuery(new Writer(), 'select pg_backend_pid() as pid').flush());
      const frames = await raw.until((f) => f.code === BackendCode.ReadyForQuery);
      const row = frames.find((f) => f.code === BackendCode.DataRow)!;
      // DataRow: int16 count, int32 length, the value's text.
      const len = row.body.readInt32BE(2);
      const pid = Number(row.body.toString('utf8', 6, 6 + len));
      await server.query(`select pg_terminate_backend(${pid})`);
    };
    const steps = ['begin', "select name from countries where code = 'fr'"];
    const viaPlain = await fatalSeen(plain.port, steps, kill(plain));
    const viaRouter = await fatalSeen(c.router.port, steps, kill(c.home));
    assert.deepEqual(viaPlain, { errors: ['FATAL 57P01'], closed: true });
    assert.deepEqual(viaRouter, viaPlain);
    // The router's pool dropped that backend: the next client is served.
    const cl = await connect(routerUrl());
    assert.equal((await cl.query("select name from countries where code = 'fr'")).rowCount, 1);
    await cl.end();
  });
});

async function outcomes(url: string, steps: readonly string[]): Promise<string[]> {
  const cl = await connect(url);
  const out: string[] = [];
  try {
    for (const sql of steps) {
      try {
        const r = await cl.query(sql);
        out.push(`${r.command} ${JSON.stringify(r.rows)}`);
      } catch (e) {
        out.push(`error ${(e as { code?: string }).code}`);
      }
    }
  } finally {
    await cl.end();
  }
  return out;
}

describe('LOCK TABLE: as Postgres, on every node holding the table', () => {
  const steps = [
    'lock table countries',
    'lock table notes',
    'lock table orders',
    'begin',
    'lock table countries in share mode',
    'select count(*)::int as n from countries',
    'commit',
    'begin',
    'lock table notes in exclusive mode',
    'select body from notes',
    'commit',
    'begin',
    'lock table orders in access exclusive mode',
    'select 1 as one',
    'commit',
    'begin',
    'lock table only orders, countries in row exclusive mode nowait',
    'rollback',
    'begin',
    'lock table no_such_table',
    'rollback',
  ];
  test('the same tags, rows and SQLSTATEs', async () => {
    assert.deepEqual(await outcomes(routerUrl(), steps), await outcomes(plain.url(), steps));
  });
  test('the lock is held on every node the table is on', async () => {
    const cl = await connect(routerUrl());
    try {
      await cl.query('begin');
      await cl.query('lock table orders, countries in access exclusive mode');
      for (const [name, node] of c.byName) {
        const r = await node.query(
          `select c.relname from pg_locks l join pg_class c on c.oid = l.relation
           where l.mode = 'AccessExclusiveLock' and l.granted and c.relname in ('orders', 'countries')
           order by 1`,
        );
        assert.deepEqual(
          r.map((x) => x['relname']),
          ['countries', 'orders'],
          `locks on ${name}`,
        );
      }
      await cl.query('commit');
    } finally {
      await cl.end();
    }
  });
});

/** COPY FROM STDIN of `lines` on a raw connection: the error's code and CONTEXT. */
async function copyError(
  port: number,
  lines: readonly string[],
): Promise<{ code: string; where: string | undefined } | undefined> {
  const raw = await RawClient.login(port);
  try {
    raw.send(writeQuery(new Writer(), 'copy orders (tenant_id, id) from stdin').flush());
    await raw.until((f) => f.code === BackendCode.CopyInResponse);
    const w = new Writer();
    for (const l of lines) writeCopyData(w, Buffer.from(`${l}\n`));
    writeCopyDone(w);
    raw.send(w.flush());
    const frames = await raw.until((f) => f.code === BackendCode.ReadyForQuery);
    const e = frames.find((f) => f.code === BackendCode.ErrorResponse);
    if (e === undefined) return undefined;
    const fields = decodeErrorResponse(e.body);
    return { code: fields.code, where: fields.where };
  } finally {
    raw.end();
  }
}

describe('COPY FROM error CONTEXT counts the client lines', () => {
  test('a bad row at line N: the same CONTEXT as Postgres', async () => {
    // Rows for every node, then a bad one (line 8) that a node sees as its own third or so.
    const good = Array.from({ length: 7 }, (_, i) => `${keys[i % 3]}\t${100 + i}`);
    for (const lines of [
      [...good, `${keys[1]}\tnot-a-number`, `${keys[2]}\t9`],
      [...good, `${keys[2]}\t1\textra`],
    ]) {
      const viaPlain = await copyError(plain.port, lines);
      const viaRouter = await copyError(c.router.port, lines);
      assert.ok(viaPlain !== undefined && viaPlain.where !== undefined);
      assert.deepEqual(viaRouter, viaPlain);
    }
  });
});
