// Split with --move-to, merge of adjacent ranges on different owners, the move marker in the
// catalog (what routers refuse DDL by), and `tessera verify`'s placement check, on a real cluster.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { ddlRefusalForMove, movesByKeyspace, ownsFunctionSql } from '@tessera/keyspace';
import { JobState } from '@tessera/proto';
import {
  bulkInsert,
  moveRequest,
  replicationLeftovers,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';

let c: MoverCluster;
const hooks: { onPhase?: (job: bigint, phase: string) => Promise<void> } = {};
const ROWS = 3_000;

before(async () => {
  c = await startMoverCluster({ ranges: 2 });
  const r = await c.viaRouter();
  try {
    const ids = Array.from({ length: ROWS }, (_, i) => i + 1);
    await bulkInsert(
      r,
      'accounts',
      ['id', 'balance'],
      ids.map((g) => [g, g]),
    );
  } finally {
    await r.end();
  }
  await c.startMover(
    {},
    { hooks: { onPhase: (j, p) => hooks.onPhase?.(j, p) ?? Promise.resolve() } },
  );
});
after(async () => {
  await c?.dispose();
});

async function accountsRanges() {
  return (await c.catalog.getCatalog({})).ranges.filter((r) => r.keyspace === 'accounts');
}

async function totalViaRouter(): Promise<{ n: string; s: string }> {
  const r = await c.viaRouter();
  try {
    return (
      await r.query<{ n: string; s: string }>(
        'select count(*) as n, sum(balance) as s from accounts',
      )
    ).rows[0]!;
  } finally {
    await r.end();
  }
}

const EXPECTED = { n: String(ROWS), s: String((ROWS * (ROWS + 1)) / 2) };

test('split --move-to: the catalog split, then the upper half moved', async () => {
  const [first] = await accountsRanges();
  assert.equal(first!.owner, 'data1');
  const at = first!.lo + (first!.hi - first!.lo) / 2n;
  const job = await c.jobs.submitJob({
    kind: 'split',
    specJson: JSON.stringify({
      keyspace: 'accounts',
      lo: first!.lo.toString(),
      at: at.toString(),
      moveTo: 'data2',
    }),
    steps: ['split', 'move'],
  });
  const done = await waitForJob(c.jobs, job.id);
  assert.equal(done.state, JobState.DONE, done.error);
  const ranges = await accountsRanges();
  assert.deepEqual(
    ranges.slice(0, 2).map((r) => [r.lo, r.hi, r.owner]),
    [
      [first!.lo, at - 1n, 'data1'],
      [at, first!.hi, 'data2'],
    ],
  );
  const children = await c.jobs.listJobs({ all: true, parentId: job.id });
  assert.deepEqual(
    children.jobs.map((j) => [j.kind, j.state]),
    [['move', JobState.DONE]],
  );
  assert.deepEqual(await totalViaRouter(), EXPECTED);
  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
});

test("merge: the upper range moves to the lower one's owner, then the two become one", async () => {
  const [lower, upper] = await accountsRanges();
  assert.notEqual(lower!.owner, upper!.owner);
  const job = await c.jobs.submitJob({
    kind: 'merge',
    specJson: JSON.stringify({
      keyspace: 'accounts',
      lo: lower!.lo.toString(),
      lo2: upper!.lo.toString(),
    }),
    steps: ['move', 'merge'],
  });
  const done = await waitForJob(c.jobs, job.id);
  assert.equal(done.state, JobState.DONE, done.error);
  const ranges = await accountsRanges();
  assert.deepEqual(
    [ranges[0]!.lo, ranges[0]!.hi, ranges[0]!.owner],
    [lower!.lo, upper!.hi, lower!.owner],
  );
  assert.deepEqual(await totalViaRouter(), EXPECTED);
});

test('a move in progress is in the catalog, so DDL on its keyspace is refused naming the job', async () => {
  const [r] = await accountsRanges();
  let seen: ReturnType<typeof ddlRefusalForMove>;
  hooks.onPhase = async (_job, phase) => {
    if (phase !== 'catching up') return;
    const cat = await c.catalog.getCatalog({});
    seen = ddlRefusalForMove(movesByKeyspace(cat), 'accounts', 'public.accounts');
  };
  try {
    const job = await c.jobs.submitJob(
      moveRequest('accounts', r!.lo, r!.owner === 'data1' ? 'data2' : 'data1'),
    );
    const done = await waitForJob(c.jobs, job.id);
    assert.equal(done.state, JobState.DONE, done.error);
    assert.equal(seen?.code, '55006');
    assert.match(seen!.message, new RegExp(`while job ${job.id} moves range accounts:`));
    assert.deepEqual((await c.catalog.getCatalog({})).moves, []);
  } finally {
    hooks.onPhase = undefined;
  }
});

test('verify: every row on its owner; a row planted on the wrong node is found', async () => {
  const submit = async (spec: object) =>
    waitForJob(
      c.jobs,
      (
        await c.jobs.submitJob({
          kind: 'verify',
          specJson: JSON.stringify(spec),
          steps: ['verify'],
        })
      ).id,
    );
  let done = await submit({ keyspace: 'accounts' });
  assert.equal(done.state, JobState.DONE, done.error);
  let result = JSON.parse(done.resultJson);
  assert.equal(result.ok, true);
  assert.equal(result.rowsChecked, ROWS);

  // Plant a row on a node that does not own it (the fence is opened for a moment by hand).
  const ranges = await accountsRanges();
  const owner = ranges[0]!.owner;
  const other = owner === 'data1' ? 'data2' : 'data1';
  const node = c.byName.get(other)!;
  const mine = ranges.filter((r) => r.owner === other);
  await node.query(ownsFunctionSql('accounts', [{ lo: -(2n ** 63n), hi: 2n ** 63n - 1n }]));
  const id = (
    await c.byName
      .get(owner)!
      .query<{ id: string }>(
        'select id::text from accounts where hashint8extended(id, 0) between $1 and $2 limit 1',
        [ranges[0]!.lo.toString(), ranges[0]!.hi.toString()],
      )
  )[0]!.id;
  await node.query(`insert into accounts (id, balance) values ($1, 0)`, [id]);
  await node.query(ownsFunctionSql('accounts', mine));
  done = await submit({ keyspace: 'accounts', lo: ranges[0]!.lo.toString() });
  result = JSON.parse(done.resultJson);
  assert.equal(result.ok, false);
  assert.deepEqual(result.misplaced, [
    { node: other, database: 'postgres', table: 'public.accounts', rows: 1 },
  ]);
  await node.query(`delete from accounts where id = $1`, [id]);
});
