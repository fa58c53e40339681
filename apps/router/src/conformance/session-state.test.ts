// Session state that cannot move between pooled backends (temporary tables, session advisory
// locks, WITH HOLD cursors, LISTEN): two clients, A and B, run the same steps through the router
// and against one plain Postgres, with --pool-size 1 and with the default pool. A's state is
// invisible to B, visible to A on its later statements and transactions, and gone (its lock free)
// once A disconnects; LISTEN notifications reach A; asyncpg's pool reset succeeds.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startRouter, type RunningRouter } from '../router.js';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { metricSum } from '../testing/keys.js';

let c: TestCluster;
let plain: PgServer;
/** A second router on the same cluster with the default pool size. */
let wide: RunningRouter;

const SETUP = ['create table orders (tenant_id bigint not null, id int not null)'];

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({ router: { poolSize: 1, acquireTimeoutMs: 3_000 } }),
    startPostgres({ name: 'session-state-plain' }),
  ]);
  wide = await startRouter({
    listen: '127.0.0.1:0',
    metricsPort: 0,
    coordinator: c.coordinator.address,
  });
  await wide.ready();
  const r = new pg.Client({ connectionString: c.url() });
  await r.connect();
  for (const sql of SETUP) await r.query(sql);
  await r.end();
  for (const sql of SETUP) await plain.query(sql);
});
after(async () => {
  await wide?.stop();
  await c?.dispose();
  await plain?.dispose();
});

interface Seen {
  readonly rows?: unknown[];
  readonly sqlstate?: string;
}

type Who = 'A' | 'B';

/** The steps: who runs what, in order. A's state must never show through B. */
const STEPS: readonly (readonly [Who, string])[] = [
  ['A', 'create temp table tmp_a (x int)'],
  ['A', 'insert into tmp_a values (1)'],
  ['B', 'select x from tmp_a'],
  ['A', 'select x from tmp_a'],
  ['A', 'begin'],
  ['A', 'insert into tmp_a values (2)'],
  ['A', 'commit'],
  ['A', 'select x from tmp_a order by x'],
  ['B', 'create temp table tmp_a (y text)'],
  ['B', 'select * from tmp_a'],
  ['A', 'create temp table tmp_v_src as select 7 as v'],
  ['A', 'select v from tmp_v_src'],
  ['A', 'select pg_advisory_lock(4242)'],
  ['B', 'select pg_try_advisory_lock(4242) as got'],
  ['A', 'select pg_try_advisory_lock(4242) as again'],
  ['B', 'select pg_try_advisory_xact_lock(4242) as xact'],
  ['A', 'begin'],
  ['A', 'declare cur_a cursor with hold for select g from generate_series(1, 3) g'],
  ['A', 'commit'],
  ['A', 'fetch 1 from cur_a'],
  ['B', 'fetch 1 from cur_a'],
  ['A', 'fetch 1 from cur_a'],
  ['A', 'listen chan_a'],
  ['B', 'select count(*)::int as n from pg_listening_channels()'],
  ['A', 'select pg_listening_channels() as ch'],
  ['B', "notify chan_a, 'hello'"],
  ['A', 'select 1 as after_notify'],
  // asyncpg's pool reset, as it sends it: one simple query.
  ['A', 'SELECT pg_advisory_unlock_all();\nCLOSE ALL;\nUNLISTEN *;\nRESET ALL;'],
  ['A', 'fetch 1 from cur_a'],
  ['A', 'select count(*)::int as n from pg_listening_channels()'],
  ['B', 'select pg_try_advisory_lock(4242) as free_now'],
  ['B', 'select pg_advisory_unlock(4242) as unlocked'],
  // One lock of two released, then the other: held until the last unlock (the router asks the
  // backend whether any is left; unpin.ts).
  ['A', 'select pg_advisory_lock(4444)'],
  ['A', 'select pg_advisory_lock(4444)'],
  ['A', 'select pg_advisory_unlock(4444) as first'],
  ['B', "select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = 4444"],
  ['A', 'select pg_advisory_unlock(4444) as last'],
  ['B', "select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = 4444"],
  // One channel of two left: its notifications still reach A.
  ['A', 'listen chan_c'],
  ['A', 'listen chan_d'],
  ['A', 'unlisten chan_c'],
  ['B', "notify chan_c, 'not heard'"],
  ['B', "notify chan_d, 'heard'"],
  ['A', 'select pg_listening_channels() as ch'],
  ['A', 'unlisten chan_d'],
  ['A', 'select count(*)::int as n from pg_listening_channels()'],
  ['A', 'select x from tmp_a order by x'],
  ['A', 'select pg_advisory_lock(4343)'],
  ['A', 'begin'],
  ['A', 'declare cur_b cursor with hold for select 1 as one'],
  ['A', 'commit'],
  ['A', 'listen chan_b'],
];

/** After A left: B and a new client C see none of A's state, and A's lock is free. */
const AFTER: readonly string[] = [
  'select x from tmp_a',
  'select v from tmp_v_src',
  'fetch 1 from cur_b',
  'select count(*)::int as n from pg_listening_channels()',
];

async function client(url: string, notes: string[]): Promise<pg.Client> {
  const cl = new pg.Client({ connectionString: url });
  cl.on('error', () => undefined);
  cl.on('notification', (n) => notes.push(`${n.channel}:${n.payload ?? ''}`));
  await cl.connect();
  return cl;
}

async function run(cl: pg.Client, sql: string): Promise<Seen> {
  try {
    const r = await cl.query(sql);
    const last = (Array.isArray(r) ? r.at(-1) : r) as pg.QueryResult;
    return { rows: last.rows };
  } catch (e) {
    return { sqlstate: (e as { code?: string }).code ?? String(e) };
  }
}

async function waitFor(what: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return what();
}

/** Polls until A's lock 4343 is free for a new session (Postgres frees it as A's backend exits). */
async function lockFreed(url: string): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const cl = await client(url, []);
    const r = await run(cl, 'select pg_try_advisory_lock(4343) as got');
    await cl.end();
    if ((r.rows?.[0] as { got?: boolean } | undefined)?.got === true) return true;
    await new Promise((res) => setTimeout(res, 100));
  }
  return false;
}

/** What A and B saw of STEPS, A's notifications, and what B and C see after A left. */
async function scenario(url: string): Promise<unknown> {
  const notesA: string[] = [];
  const a = await client(url, notesA);
  const b = await client(url, []);
  const seen: unknown[] = [];
  try {
    for (const [who, sql] of STEPS) {
      const heard = notesA.length;
      const r = await run(who === 'A' ? a : b, sql);
      seen.push({ who, sql, ...r });
      // LISTEN's notification reaches A while it is idle (a channel A does not listen on: none).
      if (sql.startsWith('notify')) await waitFor(() => notesA.length > heard, 1_500);
    }
    seen.push({ notifications: [...notesA] });
    await a.end();
    seen.push({ lockFreed: await lockFreed(url) });
    const cc = await client(url, []);
    for (const sql of AFTER) {
      seen.push({ who: 'B', sql, ...(await run(b, sql)) });
      seen.push({ who: 'C', sql, ...(await run(cc, sql)) });
    }
    await cc.end();
  } finally {
    await a.end().catch(() => undefined);
    await b.end().catch(() => undefined);
  }
  return seen;
}

function compare(viaRouter: unknown, viaPlain: unknown): void {
  const r = viaRouter as Record<string, unknown>[];
  const p = viaPlain as Record<string, unknown>[];
  const lines: string[] = [];
  for (let i = 0; i < Math.max(r.length, p.length); i++) {
    const x = JSON.stringify(r[i]);
    const y = JSON.stringify(p[i]);
    if (x !== y) lines.push(`  router:   ${x}\n  postgres: ${y}`);
  }
  assert.equal(lines.join('\n'), '', `the clients saw differently:\n${lines.join('\n')}`);
}

describe('session state is pinned to its client: router = Postgres', () => {
  test('--pool-size 1', async () => {
    compare(await scenario(c.url()), await scenario(plain.url()));
  });
  test('the default pool', async () => {
    const url = `postgres://postgres@127.0.0.1:${wide.port}/postgres`;
    compare(await scenario(url), await scenario(plain.url()));
  });
  test('the pinned sessions gauge counts a client holding state, then drops it', async () => {
    const url = `postgres://postgres@127.0.0.1:${wide.port}/postgres`;
    const a = await client(url, []);
    await run(a, 'select pg_advisory_lock(99)');
    const gauge = /^tessera_router_pinned_sessions[ {]/;
    assert.equal(await metricSum(wide.metricsPort, gauge), 1);
    assert.ok(
      (await metricSum(wide.metricsPort, /^tessera_router_pins_total\{.*reason="advisory_lock"/)) >=
        1,
    );
    await run(a, 'select pg_advisory_unlock_all()');
    assert.equal(await metricSum(wide.metricsPort, gauge), 0);
    await run(a, 'create temp table g (x int)');
    assert.equal(await metricSum(wide.metricsPort, gauge), 1);
    await a.end();
    let left = 1;
    for (let i = 0; i < 50 && left !== 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      left = await metricSum(wide.metricsPort, gauge);
    }
    assert.equal(left, 0);
  });
});

describe('a backend whose last lock or channel is released serves the pool again', () => {
  const gauge = /^tessera_router_pinned_sessions[ {]/;
  const pinned = (): Promise<number> => metricSum(wide.metricsPort, gauge);
  // The router asks the backend after the statement's answer, before the session's next message:
  // the next statement of `a` runs once the question was answered.
  const settled = async (a: pg.Client): Promise<number> => {
    await run(a, 'select 1');
    return pinned();
  };
  const url = (): string => `postgres://postgres@127.0.0.1:${wide.port}/postgres`;

  test('pg_advisory_unlock of one lock of two keeps it; of the last one frees it', async () => {
    const a = await client(url(), []);
    const b = await client(url(), []);
    // B looks at home's lock table (a read that pins nothing): how often `key` is held.
    const held = async (key: number): Promise<unknown> =>
      (
        await run(
          b,
          `select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = ${key}`,
        )
      ).rows;
    try {
      await run(a, 'select pg_advisory_lock(501)');
      await run(a, 'select pg_advisory_lock(502)');
      assert.deepEqual((await run(a, 'select pg_advisory_unlock(501) as u')).rows, [{ u: true }]);
      assert.equal(await settled(a), 1, 'lock 502 is still held');
      assert.deepEqual(await held(502), [{ n: 1 }]);
      // The same lock twice is held twice, as in Postgres.
      await run(a, 'select pg_advisory_lock(502)');
      await run(a, 'select pg_advisory_unlock(502)');
      assert.equal(await settled(a), 1, 'lock 502 is held once more');
      await run(a, 'select pg_advisory_unlock(502)');
      assert.equal(await settled(a), 0);
      assert.deepEqual(await held(502), [{ n: 0 }]);
      // Pinned again by the next lock, and the lock is A's.
      await run(a, 'select pg_try_advisory_lock(503)');
      assert.equal(await pinned(), 1);
      assert.deepEqual(await held(503), [{ n: 1 }]);
      // Released inside a transaction: asked once the transaction is over.
      await run(a, 'begin');
      await run(a, 'select pg_advisory_unlock(503)');
      assert.equal(await settled(a), 1);
      await run(a, 'commit');
      assert.equal(await settled(a), 0);
      assert.deepEqual(await held(503), [{ n: 0 }]);
    } finally {
      await a.end();
      await b.end();
    }
  });

  test('UNLISTEN of one channel of two keeps it and its notifications; of the last frees it', async () => {
    const notes: string[] = [];
    const a = await client(url(), notes);
    const b = await client(url(), []);
    try {
      await run(a, 'listen ch_one');
      await run(a, 'listen ch_two');
      await run(a, 'unlisten ch_one');
      assert.equal(await settled(a), 1);
      await run(b, "notify ch_one, 'gone'");
      await run(b, "notify ch_two, 'here'");
      assert.ok(await waitFor(() => notes.length > 0, 3_000), 'a notification on ch_two');
      await run(a, 'select 1');
      assert.deepEqual(notes, ['ch_two:here']);
      await run(a, 'unlisten ch_two');
      assert.equal(await settled(a), 0);
      assert.deepEqual(
        (await run(a, 'select count(*)::int as n from pg_listening_channels()')).rows,
        [{ n: 0 }],
      );
    } finally {
      await a.end();
      await b.end();
    }
  });

  test('a backend still holding a temporary table stays pinned after its last unlock', async () => {
    const a = await client(url(), []);
    try {
      await run(a, 'create temp table keep_me (x int)');
      await run(a, 'select pg_advisory_lock(504)');
      await run(a, 'select pg_advisory_unlock(504)');
      assert.equal(await settled(a), 1);
      assert.deepEqual((await run(a, 'select count(*)::int as n from keep_me')).rows, [{ n: 0 }]);
    } finally {
      await a.end();
    }
  });
});

describe('notifications reach an idle listener', () => {
  test('one sent while it was in a transaction arrives after its COMMIT, with no statement after', async () => {
    for (const url of [c.url(), plain.url()]) {
      const notes: string[] = [];
      const a = await client(url, notes);
      const b = await client(url, []);
      try {
        await run(a, 'listen ch_late');
        for (let i = 0; i < 5; i++) {
          await run(a, 'begin');
          await run(a, 'select 1');
          // Held by Postgres while A is in its transaction; sent right after A's COMMIT.
          await run(b, `notify ch_late, '${i}'`);
          await run(a, 'commit');
          assert.ok(
            await waitFor(() => notes.length > i, 2_000),
            `${url === plain.url() ? 'Postgres' : 'router'}: notification ${i} arrived (${notes.join(' ')})`,
          );
        }
      } finally {
        await a.end();
        await b.end();
      }
    }
  });
});

describe('temporary tables and sharded tables', () => {
  test('a statement joining a temporary table with a sharded table across nodes is refused', async () => {
    const a = await client(c.url(), []);
    try {
      await run(a, 'create temp table tmp_j (tenant_id bigint)');
      const r = await run(a, 'select * from tmp_j join orders using (tenant_id)');
      assert.equal(r.sqlstate, '0A000');
      const w = await run(a, 'insert into tmp_j select tenant_id from orders');
      assert.equal(w.sqlstate, '0A000');
    } finally {
      await a.end();
    }
  });
});
