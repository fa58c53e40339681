// A move end to end without concurrent load: rows copied, ownership flipped, old rows deleted,
// fences narrowed and widened, nothing left behind; verification catching a row changed by hand
// on the target; a failing and a cancelled move leaving the cluster as it was.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashKeyText } from '@tessera/pg-hash';
import { JobState } from '@tessera/proto';
import type pg from 'pg';
import {
  bulkInsert,
  moveRequest,
  replicationLeftovers,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';
import type { RunningMover } from '../mover.js';

let c: MoverCluster;
const hooks: { onPhase?: (job: bigint, phase: string) => Promise<void> } = {};
let mover: RunningMover;

const ROWS = 4_000;

before(async () => {
  c = await startMoverCluster();
  const r = await c.viaRouter();
  try {
    const ids = Array.from({ length: ROWS }, (_, i) => i + 1);
    await bulkInsert(
      r,
      'accounts',
      ['id', 'balance', 'note'],
      ids.map((g) => [g, g * 10, `n${g}`]),
    );
    await bulkInsert(
      r,
      'entries',
      ['account_id', 'seq', 'amount'],
      ids.map((g) => [(g % 500) + 1, g, g]),
    );
    await r.query(`insert into countries values ('fr', 'France'), ('se', 'Sweden')`);
  } finally {
    await r.end();
  }
  mover = await c.startMover(
    {},
    { hooks: { onPhase: (j, p) => hooks.onPhase?.(j, p) ?? Promise.resolve() } },
  );
});
after(async () => {
  await c?.dispose();
});

const owns = (ranges: { lo: bigint; hi: bigint }[], key: bigint) => {
  const h = hashKeyText('bigint', key.toString(), 0n);
  return ranges.some((r) => r.lo <= h && h <= r.hi);
};

async function countOn(node: string, sql: string): Promise<number> {
  const rows = await c.byName.get(node)!.query<{ n: string }>(sql);
  return Number(rows[0]!.n);
}

async function rangesOf(node: string) {
  const cat = await c.catalog.getCatalog({});
  return cat.ranges.filter((r) => r.keyspace === 'accounts' && r.owner === node);
}

async function tryInsert(node: string, id: bigint): Promise<'ok' | 'refused'> {
  const client: pg.Client = await c.byName.get(node)!.connect();
  try {
    await client.query('begin');
    await client.query('insert into accounts (id) values ($1)', [id.toString()]);
    await client.query('rollback');
    return 'ok';
  } catch (e) {
    assert.equal((e as { code?: string }).code, '23514', String(e));
    return 'refused';
  } finally {
    await client.end();
  }
}

test('a move copies the range, flips its owner, deletes the old copy and leaves nothing behind', async () => {
  const before = await c.catalog.getCatalog({});
  const range = before.ranges.find((r) => r.keyspace === 'accounts' && r.owner === 'data1')!;
  const inRange = (id: bigint) => owns([range], id);
  const ids = Array.from({ length: ROWS }, (_, i) => BigInt(i + 1));
  const moving = ids.filter(inRange).length;
  assert.ok(moving > 200, `${moving} rows in the range`);
  const totalBefore = await countOn('data1', 'select count(*) from accounts');

  const job = await c.jobs.submitJob(moveRequest('accounts', range.lo, 'data2'));
  const done = await waitForJob(c.jobs, job.id);
  assert.equal(done.state, JobState.DONE, done.error);
  assert.equal(done.committed, true);

  const after = await c.catalog.getCatalog({});
  const moved = after.ranges.find((r) => r.keyspace === 'accounts' && r.lo === range.lo)!;
  assert.equal(moved.owner, 'data2');
  assert.equal(moved.state, before.ranges.find((r) => r.lo === range.lo)!.state);
  assert.deepEqual(after.moves, []);

  // Rows: all of the range on data2, none left on data1, the rest untouched.
  assert.equal(await countOn('data1', 'select count(*) from accounts'), totalBefore - moving);
  const d2 = await c.byName.get('data2')!.query<{ id: string }>('select id::text from accounts');
  assert.equal(d2.filter((r) => inRange(BigInt(r.id))).length, moving);
  const r = await c.viaRouter();
  try {
    const all = await r.query<{ n: string; s: string }>(
      'select count(*) as n, sum(balance) as s from accounts',
    );
    assert.equal(all.rows[0]!.n, String(ROWS));
    assert.equal(all.rows[0]!.s, String((ROWS * (ROWS + 1) * 10) / 2));
    const e = await r.query<{ n: string }>('select count(*) as n from entries');
    assert.equal(e.rows[0]!.n, String(ROWS));
  } finally {
    await r.end();
  }

  // Fences: data1 refuses the moved range now, data2 takes it; both are the function-based fence.
  const fresh = [...Array(2000).keys()].map((i) => BigInt(ROWS + 1 + i)).find(inRange)!;
  assert.equal(await tryInsert('data1', fresh), 'refused');
  assert.equal(await tryInsert('data2', fresh), 'ok');
  for (const node of ['data1', 'data2']) {
    const defs = await c.byName
      .get(node)!
      .query<{ def: string }>(
        `select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'tessera_owns' and conrelid = 'accounts'::regclass`,
      );
    assert.match(defs[0]!.def, /tessera\.owns_accounts\(/);
  }
  const d1Ranges = await rangesOf('data1');
  const other = [...Array(2000).keys()]
    .map((i) => BigInt(ROWS + 1 + i))
    .find((k) => owns(d1Ranges, k))!;
  assert.equal(await tryInsert('data1', other), 'ok');

  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
  const result = JSON.parse(done.resultJson);
  assert.equal(result.verify.mismatches.length, 0);
  assert.ok(result.verify.rows >= moving, JSON.stringify(result.verify));
  assert.ok(result.cutover.pauseMs > 0);

  // Metrics: the copy is counted; the job's lag is exported only while the job runs.
  const metrics = async () => (await fetch(`http://127.0.0.1:${mover.metricsPort}/metrics`)).text();
  assert.match(
    await metrics(),
    /tessera_mover_rows_copied_total\{keyspace="accounts"[^}]*\} [1-9]/,
  );
  const lagLine = `tessera_mover_lag_bytes{job="${job.id}"`;
  for (let i = 0; i < 50 && (await metrics()).includes(lagLine); i++) await sleep(100);
  assert.ok(!(await metrics()).includes(lagLine), `${lagLine} is still exported`);
});

test('verification finds a row changed by hand on the target, keeps both copies and ends verify_failed', async () => {
  const cat = await c.catalog.getCatalog({});
  const range = cat.ranges.find((r) => r.keyspace === 'accounts' && r.owner === 'data2')!;
  const victim = (
    await c.byName
      .get('data2')!
      .query<{ id: string }>(
        `select id::text from accounts where hashint8extended(id, 0) between $1 and $2 order by id limit 1`,
        [range.lo.toString(), range.hi.toString()],
      )
  )[0]!.id;
  const rowsBefore = await countOn('data2', 'select count(*) from accounts');
  hooks.onPhase = async (_job, phase) => {
    if (phase !== 'catching up') return;
    await c.byName
      .get('data1')!
      .query(`update accounts set note = 'changed by hand' where id = $1`, [victim]);
  };
  try {
    const job = await c.jobs.submitJob(moveRequest('accounts', range.lo, 'data1'));
    const done = await waitForJob(c.jobs, job.id);
    assert.equal(done.state, JobState.VERIFY_FAILED, done.error);
    assert.match(done.error, /differ/);
    const v = JSON.parse(done.resultJson).verify;
    assert.equal(v.mismatches.length, 1);
    assert.deepEqual(v.mismatches[0].changed, [victim]);
    // Both copies kept; replication objects gone; the move ended in the catalog.
    assert.equal(await countOn('data2', 'select count(*) from accounts'), rowsBefore);
    assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
    assert.deepEqual((await c.catalog.getCatalog({})).moves, []);
  } finally {
    hooks.onPhase = undefined;
  }
});

test('a cancelled move and a failed move both leave the cluster as it was', async () => {
  const cat = await c.catalog.getCatalog({});
  const range =
    cat.ranges.find(
      (r) => r.keyspace === 'accounts' && r.owner === 'data1' && r.lo !== cat.ranges[0]!.lo,
    ) ?? cat.ranges.find((r) => r.keyspace === 'accounts' && r.owner === 'data1')!;
  const snapshot = async () => ({
    d1: await countOn('data1', 'select count(*) from accounts'),
    d2: await countOn('data2', 'select count(*) from accounts'),
    owner: (await c.catalog.getCatalog({})).ranges.find(
      (r) => r.lo === range.lo && r.keyspace === 'accounts',
    )!.owner,
  });
  const start = await snapshot();

  // Cancelled while catching up.
  hooks.onPhase = async (job, phase) => {
    if (phase === 'catching up') await c.jobs.cancelJob({ id: job });
  };
  let job = await c.jobs.submitJob(moveRequest('accounts', range.lo, 'data2'));
  let done = await waitForJob(c.jobs, job.id);
  assert.equal(done.state, JobState.CANCELLED, done.error);
  assert.deepEqual(await snapshot(), start);
  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
  assert.deepEqual((await c.catalog.getCatalog({})).moves, []);
  const fresh = [...Array(4000).keys()]
    .map((i) => BigInt(10_000 + i))
    .find((k) => owns([range], k))!;
  assert.equal(await tryInsert('data2', fresh), 'refused', 'the target fence is narrow again');
  assert.equal(await tryInsert('data1', fresh), 'ok');

  // Failed: a row the target already has makes the initial copy fail (its COPY on the target).
  hooks.onPhase = async (_job, phase) => {
    if (phase !== 'preparing') return;
    // After prepare widened data2's fence and deleted stale rows: plant a conflicting row.
    const id = (
      await c.byName
        .get('data1')!
        .query<{ id: string }>(
          `select id::text from accounts where hashint8extended(id, 0) between $1 and $2 limit 1`,
          [range.lo.toString(), range.hi.toString()],
        )
    )[0]!.id;
    await c.byName
      .get('data2')!
      .query(`insert into accounts (id, note) values ($1, 'planted')`, [id]);
  };
  job = await c.jobs.submitJob(moveRequest('accounts', range.lo, 'data2'));
  done = await waitForJob(c.jobs, job.id);
  assert.equal(done.state, JobState.FAILED);
  assert.match(
    done.error,
    /copying postgres\/"public"\."accounts" from data1 to data2 failed: duplicate key/,
  );
  assert.deepEqual(await snapshot(), start);
  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
  assert.deepEqual((await c.catalog.getCatalog({})).moves, []);
  hooks.onPhase = undefined;
  void mover;
});
