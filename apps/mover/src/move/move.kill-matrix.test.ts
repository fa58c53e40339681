// The kill matrix: the mover SIGKILLs itself right after it durably entered each phase of a move
// (TESSERA_MOVER_FAULT). One move is killed at every phase in turn, each time resumed by the
// mover restarted (the same id, at once; after the flip another mover, once the lease lapsed);
// other moves are killed at a phase and cancelled with `tessera jobs cancel` (undone before the
// flip, refused after it). Whatever happened, afterwards: no row lost or duplicated, every row of the range
// on exactly its owner, the range active, no move in the catalog, no publication, subscription
// or replication slot on any node. Then the coordinator killed during the freeze and the flip,
// and a router stopped during the freeze.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { captureIo, main } from '@tessera/cli';
import { JobState, RangeState } from '@tessera/proto';
import { startRouter } from '@tessera/router';
import {
  bulkInsert,
  moveRequest,
  quiet,
  replicationLeftovers,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';
import { spawnMover } from '../testing/processes.js';
import { MOVE_PHASES } from './spec.js';

let c: MoverCluster;
const ROWS = 3_000;
const SUM = String((ROWS * (ROWS + 1)) / 2);

before(async () => {
  c = await startMoverCluster({ ranges: 2 });
  const r = await c.viaRouter();
  try {
    await bulkInsert(
      r,
      'accounts',
      ['id', 'balance'],
      Array.from({ length: ROWS }, (_, i) => [i + 1, i + 1]),
    );
  } finally {
    await r.end();
  }
});
after(async () => {
  await c?.dispose();
});

async function firstRange() {
  return (await c.catalog.getCatalog({})).ranges.find((r) => r.keyspace === 'accounts')!;
}

/** Everything the matrix promises, whichever way the job ended. */
async function invariants(expectedOwner: string): Promise<void> {
  const cat = await c.catalog.getCatalog({});
  const r = cat.ranges.find((x) => x.keyspace === 'accounts')!;
  assert.equal(r.owner, expectedOwner);
  assert.equal(r.state, RangeState.ACTIVE);
  assert.deepEqual(cat.moves, []);
  const via = await c.viaRouter();
  try {
    const t = (
      await via.query<{ n: string; s: string }>(
        'select count(*) as n, sum(balance) as s from accounts',
      )
    ).rows[0]!;
    assert.deepEqual(t, { n: String(ROWS), s: SUM }, 'no row lost or duplicated');
  } finally {
    await via.end();
  }
  const inRange = `hashint8extended(id, 0) between ${r.lo} and ${r.hi}`;
  for (const node of ['data1', 'data2']) {
    const n = Number(
      (
        await c.byName
          .get(node)!
          .query<{ n: string }>(`select count(*) as n from accounts where ${inRange}`)
      )[0]!.n,
    );
    if (node !== expectedOwner) assert.equal(n, 0, `rows of the range left on ${node}`);
    else assert.ok(n > 100, `only ${n} rows of the range on its owner`);
  }
  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
}

/** Moves 1 of balance between two rows of range `r` through the router (the sum stays). */
async function shiftBalance(r: { lo: bigint; hi: bigint }, owner: string): Promise<void> {
  const ids = await c.byName
    .get(owner)!
    .query<{ id: string }>(
      `select id from accounts where hashint8extended(id, 0) between ${r.lo} and ${r.hi} order by id limit 2`,
    );
  assert.equal(ids.length, 2);
  const via = await c.viaRouter();
  try {
    await via.query('update accounts set balance = balance + 1 where id = $1', [ids[0]!.id]);
    await via.query('update accounts set balance = balance - 1 where id = $1', [ids[1]!.id]);
  } finally {
    await via.end();
  }
}

async function cancel(id: bigint): Promise<number> {
  const io = captureIo({}, '/tmp');
  return main(
    ['jobs', 'cancel', id.toString(), '--yes', '--coordinator', c.coordinator.address],
    io,
  );
}

let runs = 0;

test('one move killed at every phase in turn (resumed by the same mover, once taken over by another) ends once, whole', async () => {
  const r = await firstRange();
  const to = r.owner === 'data1' ? 'data2' : 'data1';
  const job = await c.jobs.submitJob(moveRequest('accounts', r.lo, to));
  let id = `chain-${runs++}`;
  for (const phase of MOVE_PHASES) {
    // After the flip, a different mover takes the job over once the lease lapsed.
    if (phase === 'verifying') id = `${id}-b`;
    const m = spawnMover({ coordinator: c.coordinator.address, moverId: id, fault: phase });
    assert.equal(await m.exited, 'SIGKILL', `the mover did not kill itself at ${phase}`);
    const j = await c.jobs.getJob({ id: job.id });
    assert.equal(j.phase, phase);
    assert.equal(
      j.committed,
      MOVE_PHASES.indexOf(phase) >= MOVE_PHASES.indexOf('flipped'),
      `committed at ${phase}`,
    );
    // Writes of the range reach its new owner after the flip, before anyone could verify.
    if (phase === 'verifying') await shiftBalance(r, to);
  }
  const last = spawnMover({ coordinator: c.coordinator.address, moverId: id });
  try {
    const done = await waitForJob(c.jobs, job.id, 180_000);
    assert.equal(done.state, JobState.DONE, done.error);
    assert.ok(done.takeovers >= 1, 'taken over by a second mover');
    // The snapshots died with the mover killed at verifying: no comparison, said so.
    assert.match(JSON.parse(done.resultJson).verify.skipped, /can no longer be compared/);
    await invariants(to);
  } finally {
    await last.stop();
  }
});

async function killThenCancel(phase: string, takeover: boolean): Promise<void> {
  const r = await firstRange();
  const from = r.owner;
  const to = from === 'data1' ? 'data2' : 'data1';
  const id = `cancel-${runs++}`;
  const dying = spawnMover({ coordinator: c.coordinator.address, moverId: id, fault: phase });
  const job = await c.jobs.submitJob(moveRequest('accounts', r.lo, to));
  assert.equal(await dying.exited, 'SIGKILL', `the mover did not kill itself at ${phase}`);
  const killed = await c.jobs.getJob({ id: job.id });
  assert.equal(killed.phase, phase);
  const code = await cancel(job.id);
  if (killed.committed) assert.equal(code, 1, 'a cancel after the flip is refused');
  else assert.equal(code, 0);
  const next = spawnMover({
    coordinator: c.coordinator.address,
    moverId: takeover ? `${id}-b` : id,
  });
  try {
    const done = await waitForJob(c.jobs, job.id, 180_000);
    assert.equal(
      done.state,
      killed.committed ? JobState.DONE : JobState.CANCELLED,
      `${phase}: ${done.error}`,
    );
    if (takeover) assert.ok(done.takeovers >= 1, 'taken over by the second mover');
    await invariants(killed.committed ? to : from);
  } finally {
    await next.stop();
  }
}

for (const [phase, takeover] of [
  ['preparing', false],
  ['copying', false],
  ['catching up', true],
  ['frozen', false],
] as const) {
  test(`killed at "${phase}", tessera jobs cancel puts everything back${takeover ? ' (another mover undoes it)' : ''}`, () =>
    killThenCancel(phase, takeover));
}
test('killed at "flipped", a cancel is refused and another mover takes the job over to its end', () =>
  killThenCancel('flipped', true));

test('the coordinator restarted during the freeze and again after the flip: the move still ends, once', async () => {
  const r = await firstRange();
  const to = r.owner === 'data1' ? 'data2' : 'data1';
  const restarts: string[] = [];
  let restarting: Promise<unknown> = Promise.resolve();
  const mover = await c.startMover(
    {},
    {
      hooks: {
        onPhase: async (_job, phase) => {
          if ((phase !== 'frozen' && phase !== 'flipped') || restarts.includes(phase)) return;
          restarts.push(phase);
          // Not awaited by the mover: its calls meet a coordinator that is gone, then back.
          restarting = restarting.then(() => c.restartCoordinator());
        },
      },
    },
  );
  try {
    const job = await c.jobs.submitJob(moveRequest('accounts', r.lo, to));
    const done = await waitForJob(c.jobs, job.id, 180_000);
    await restarting;
    assert.equal(done.state, JobState.DONE, done.error);
    assert.ok(restarts.includes('frozen') && restarts.includes('flipped'), restarts.join());
    await invariants(to);
  } finally {
    await mover.stop();
  }
});

test('a router stopped cleanly during the freeze deregisters and is not waited for', async () => {
  const extra = await startRouter(
    {
      listen: '127.0.0.1:0',
      metricsPort: 0,
      coordinator: c.coordinator.address,
      routerId: 'doomed',
    },
    { logger: quiet('router') },
  );
  await extra.ready();
  const r = await firstRange();
  const to = r.owner === 'data1' ? 'data2' : 'data1';
  let stopped = false;
  const mover = await c.startMover(
    { cutoverBudgetMs: 1_000, cutoverAttempts: 30 },
    {
      hooks: {
        onPhase: async (_job, phase) => {
          if (phase === 'frozen' && !stopped) {
            stopped = true;
            await extra.stop();
          }
        },
      },
    },
  );
  try {
    const job = await c.jobs.submitJob(moveRequest('accounts', r.lo, to));
    const done = await waitForJob(c.jobs, job.id, 180_000);
    assert.equal(done.state, JobState.DONE, done.error);
    const cutover = JSON.parse(done.steps.find((s) => s.name === 'cutover')!.progressJson);
    // A router that stops cleanly deregisters (RouterLeaseService.DeregisterRouter): the cutover
    // does not wait for its lease or heartbeat (15 s stale) to run out.
    assert.ok(
      cutover.flipAckMs < 10_000,
      `the stopped router was not waited for: ${JSON.stringify(cutover)}`,
    );
    await invariants(to);
  } finally {
    await mover.stop();
  }
});
