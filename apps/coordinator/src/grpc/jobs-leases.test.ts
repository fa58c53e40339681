// The mover's side of the coordinator end to end: job leases and takeovers, cancel through the
// job's mover, cleanup records, lease-fenced catalog changes, and waiting for router acks with
// router leases. Real Postgres, the real coordinator, its gRPC clients.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, JobState, KeyType, NodeRole, NodeState, RangeState, RpcError } from '@tessera/proto';
import {
  clientsFor,
  freshDatabase,
  startPostgres,
  startTestCoordinator,
  type Clients,
  type PgServer,
  type TestCoordinator,
} from '../testing.js';

let server: PgServer;
let t: TestCoordinator;
before(async () => {
  server = await startPostgres({ name: 'jobs-leases' });
  t = await startTestCoordinator(await freshDatabase(server), {
    routerLeaseMs: 1_000,
    routerStaleMs: 1_500,
  });
  await t.admin.addNode({ name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME });
  await t.admin.addNode({ name: 'd1', host: '127.0.0.1', port: 5433, role: NodeRole.DATA });
  await t.admin.addNode({ name: 'd2', host: '127.0.0.1', port: 5434, role: NodeRole.DATA });
  await t.admin.createKeyspace({ name: 'ks', keyType: KeyType.BIGINT, ranges: 2 });
});
after(async () => {
  await t.stop();
  await server.dispose();
});

const isCode = (code: Code) => (e: unknown) => e instanceof RpcError && e.code === code;

async function newJob(kind = 'move') {
  return t.jobs.submitJob({ kind, specJson: '{}', steps: ['a', 'b'] });
}

/** Claims until `id` comes up (other tests' jobs may be older), leaving the others alone. */
async function claimUntil(moverId: string, id: bigint, leaseMs = 15_000n) {
  const skipped: bigint[] = [];
  for (;;) {
    const { job } = await t.jobs.claimJob({ moverId, leaseMs, running: skipped });
    assert.ok(job, `job ${id} was never handed to ${moverId}`);
    if (job.id === id) return job;
    skipped.push(job.id);
  }
}

test('a job lease is renewed by its holder, taken over after it lapses, and fences the old holder', async () => {
  const j = await newJob();
  const claimed = await claimUntil('m1', j.id, 300n);
  assert.equal(claimed.state, JobState.RUNNING);
  assert.equal(claimed.claimedBy, 'm1');
  assert.ok(claimed.leaseUntilMs > BigInt(Date.now()));
  // Held: nobody else gets it, and m1 is not handed it again while it says it runs it.
  assert.notEqual((await t.jobs.claimJob({ moverId: 'm2' })).job?.id, j.id);
  assert.notEqual((await t.jobs.claimJob({ moverId: 'm1', running: [j.id] })).job?.id, j.id);
  // Renewed, it stays m1's past the first lease.
  await t.jobs.renewJobLease({ jobId: j.id, moverId: 'm1', leaseMs: 300n });
  await sleep(200);
  await t.jobs.renewJobLease({ jobId: j.id, moverId: 'm1', leaseMs: 300n });
  await sleep(200);
  assert.notEqual((await t.jobs.claimJob({ moverId: 'm2', running: [] })).job?.id, j.id);
  // Lapsed: m2 takes it over, with its progress, and m1 can change nothing any more.
  await t.jobs.reportStep({
    jobId: j.id,
    moverId: 'm1',
    stepIndex: 0,
    state: JobState.DONE,
    progressJson: '{"rows":7}',
    phase: 'copying',
  });
  await sleep(400);
  const taken = await claimUntil('m2', j.id);
  assert.equal(taken.claimedBy, 'm2');
  assert.equal(taken.takeovers, 1);
  assert.equal(taken.phase, 'copying');
  assert.equal(JSON.parse(taken.steps[0]!.progressJson).rows, 7);
  await assert.rejects(
    t.jobs.renewJobLease({ jobId: j.id, moverId: 'm1' }),
    isCode(Code.FAILED_PRECONDITION),
  );
  await assert.rejects(
    t.jobs.reportStep({ jobId: j.id, moverId: 'm1', stepIndex: 1, state: JobState.DONE }),
    isCode(Code.FAILED_PRECONDITION),
  );
  const done = await t.jobs.finishJob({
    jobId: j.id,
    moverId: 'm2',
    state: JobState.DONE,
    resultJson: '{"ok":true}',
  });
  assert.equal(done.state, JobState.DONE);
  assert.equal(JSON.parse(done.resultJson).ok, true);
  assert.deepEqual(
    done.steps.map((s) => s.state),
    [JobState.DONE, JobState.DONE],
  );
  await assert.rejects(
    t.jobs.finishJob({ jobId: j.id, moverId: 'm2', state: JobState.RUNNING }),
    isCode(Code.INVALID_ARGUMENT),
  );
  await assert.rejects(
    t.jobs.finishJob({ jobId: j.id, moverId: 'm2', state: JobState.DONE }),
    isCode(Code.FAILED_PRECONDITION),
  );
});

test('cancel: pending at once, running through its mover (also after a takeover), refused once committed', async () => {
  const pending = await newJob();
  assert.equal((await t.jobs.cancelJob({ id: pending.id })).state, JobState.CANCELLED);

  const running = await newJob();
  await claimUntil('m3', running.id, 200n);
  const c = await t.jobs.cancelJob({ id: running.id });
  assert.equal(c.state, JobState.CANCELLING);
  assert.equal((await t.jobs.cancelJob({ id: running.id })).state, JobState.CANCELLING);
  // m3 died: after its lease another mover claims the cancelling job to run its cleanup.
  await sleep(300);
  const cleaner = await claimUntil('m4', running.id);
  assert.equal(cleaner.state, JobState.CANCELLING);
  const ended = await t.jobs.finishJob({
    jobId: running.id,
    moverId: 'm4',
    state: JobState.CANCELLED,
  });
  assert.equal(ended.state, JobState.CANCELLED);
  await assert.rejects(t.jobs.cancelJob({ id: running.id }), isCode(Code.FAILED_PRECONDITION));
});

test('cleanup records: written before the object, idempotent, in order, only by the holder', async () => {
  const j = await newJob();
  await claimUntil('m5', j.id);
  const rec = (name: string, kind = 'publication', policy = 'always') => ({
    moverId: 'm5',
    record: { jobId: j.id, node: 'd1', database: 'app', kind, name, policy },
  });
  await t.jobs.recordCleanup(rec('tessera_mv_1_0'));
  await t.jobs.recordCleanup(rec('tessera_mv_1_0', 'subscription'));
  await t.jobs.recordCleanup(rec('ks:0', 'rows', 'on_failure'));
  await t.jobs.markCleanupDone({
    moverId: 'm5',
    jobId: j.id,
    node: 'd1',
    database: 'app',
    kind: 'publication',
    name: 'tessera_mv_1_0',
  });
  let list = (await t.jobs.listCleanup({ jobId: j.id })).records;
  assert.deepEqual(
    list.map((r) => [r.kind, r.name, r.policy, r.done]),
    [
      ['publication', 'tessera_mv_1_0', 'always', true],
      ['subscription', 'tessera_mv_1_0', 'always', false],
      ['rows', 'ks:0', 'on_failure', false],
    ],
  );
  // Recorded again (a retry about to create it again): not done any more, same place.
  await t.jobs.recordCleanup(rec('tessera_mv_1_0'));
  list = (await t.jobs.listCleanup({ jobId: j.id })).records;
  assert.equal(list[0]!.done, false);
  assert.equal(list.length, 3);
  await assert.rejects(
    t.jobs.recordCleanup({ ...rec('x'), moverId: 'someone-else' }),
    isCode(Code.FAILED_PRECONDITION),
  );
  await assert.rejects(t.jobs.recordCleanup(rec('x', 'bogus')), isCode(Code.INVALID_ARGUMENT));
});

test('job catalog changes: fenced by the lease, idempotent, and the flip commits the job', async () => {
  const catalog = await t.catalog.getCatalog({});
  const r = catalog.ranges.find((x) => x.keyspace === 'ks' && x.owner === 'd1')!;
  const j = await newJob();
  await claimUntil('m6', j.id);
  const base = { jobId: j.id, moverId: 'm6', keyspace: 'ks', lo: r.lo, hi: r.hi };

  const move = await t.jobs.changeRangeMove({ ...base, source: 'd1', target: 'd2' });
  let c = await t.catalog.getCatalog({});
  assert.equal(c.epoch, move.epoch);
  assert.deepEqual(
    c.moves.map((m) => [m.keyspace, m.lo, m.jobId, m.source, m.target]),
    [['ks', r.lo, j.id, 'd1', 'd2']],
  );
  assert.equal(
    (await t.jobs.changeRangeMove({ ...base, source: 'd1', target: 'd2' })).epoch,
    move.epoch,
    'declaring the same move again changes nothing',
  );
  // Another job cannot move a range of the same keyspace on d1 or d2 meanwhile.
  const other = await newJob();
  await claimUntil('m7', other.id);
  const otherRange = c.ranges.find((x) => x.keyspace === 'ks' && x.owner === 'd2')!;
  await assert.rejects(
    t.jobs.changeRangeMove({
      jobId: other.id,
      moverId: 'm7',
      keyspace: 'ks',
      lo: otherRange.lo,
      hi: otherRange.hi,
      source: 'd2',
      target: 'd1',
    }),
    isCode(Code.FAILED_PRECONDITION),
  );

  const frozen = await t.jobs.changeRange({ ...base, owner: 'd1', state: RangeState.FROZEN });
  assert.ok(frozen.epoch > move.epoch);
  const again = await t.jobs.changeRange({ ...base, owner: 'd1', state: RangeState.FROZEN });
  assert.equal(again.epoch, frozen.epoch, 'freezing a frozen range changes nothing');
  await assert.rejects(
    t.jobs.changeRange({ ...base, moverId: 'm7', owner: 'd2', state: RangeState.FROZEN }),
    isCode(Code.FAILED_PRECONDITION),
  );
  await assert.rejects(
    t.jobs.changeRange({ ...base, hi: r.hi - 1n, owner: 'd2', state: RangeState.FROZEN }),
    isCode(Code.FAILED_PRECONDITION),
  );
  const flipped = await t.jobs.changeRange({
    ...base,
    owner: 'd2',
    state: RangeState.FROZEN,
    commitJob: true,
  });
  c = await t.catalog.getCatalog({});
  const now = c.ranges.find((x) => x.keyspace === 'ks' && x.lo === r.lo)!;
  assert.equal(now.owner, 'd2');
  assert.equal(now.state, RangeState.FROZEN);
  assert.equal(c.epoch, flipped.epoch);
  assert.equal((await t.jobs.getJob({ id: j.id })).committed, true);
  await assert.rejects(t.jobs.cancelJob({ id: j.id }), isCode(Code.FAILED_PRECONDITION));
  await t.jobs.changeRange({ ...base, owner: 'd2', state: RangeState.ACTIVE });
  await t.jobs.changeRangeMove({ ...base, remove: true });
  assert.deepEqual((await t.catalog.getCatalog({})).moves, []);
  await t.jobs.finishJob({ jobId: j.id, moverId: 'm6', state: JobState.DONE });
  await t.jobs.finishJob({ jobId: other.id, moverId: 'm7', state: JobState.FAILED, error: 'x' });
});

test('job node changes: a new node joins then turns active; one that owns ranges cannot be removed', async () => {
  const j = await newJob('node-add');
  await claimUntil('m8', j.id);
  const base = { jobId: j.id, moverId: 'm8', name: 'd3' };
  await t.jobs.changeNode({ ...base, state: NodeState.JOINING, host: '127.0.0.1', port: 5435 });
  let node = (await t.catalog.getCatalog({})).nodes.find((n) => n.name === 'd3');
  assert.equal(node?.state, NodeState.JOINING);
  await t.jobs.changeNode({ ...base, state: NodeState.ACTIVE });
  node = (await t.catalog.getCatalog({})).nodes.find((n) => n.name === 'd3');
  assert.equal(node?.state, NodeState.ACTIVE);
  await assert.rejects(
    t.jobs.changeNode({ jobId: 0n, moverId: '', name: 'd2', state: NodeState.REMOVED }),
    isCode(Code.FAILED_PRECONDITION),
  );
  await t.jobs.changeNode({ jobId: 0n, moverId: '', name: 'd3', state: NodeState.REMOVED });
  node = (await t.catalog.getCatalog({})).nodes.find((n) => n.name === 'd3');
  assert.equal(node?.state, NodeState.REMOVED);
  await t.jobs.finishJob({ jobId: j.id, moverId: 'm8', state: JobState.DONE });
});

test('AwaitEpoch waits for live routers, leaves out lapsed leases and stale lease-less routers', async () => {
  const c: Clients = clientsFor(t.coordinator.address);
  try {
    const epoch = (await t.catalog.getCatalog({})).epoch;
    await c.router.registerRouter({ id: 'r-lease', address: 'a:1' });
    await c.router.registerRouter({ id: 'r-old', address: 'a:2' });
    await c.router.registerRouter({ id: 'r-bye', address: 'a:3' });
    const lease = await c.routerLease.renewRouterLease({ routerId: 'r-lease', epoch });
    assert.equal(lease.leaseMs, 1_000n);
    await c.routerLease.deregisterRouter({ routerId: 'r-bye' });

    let w = await c.jobs.awaitEpoch({ epoch, timeoutMs: 50n });
    assert.equal(w.reached, false);
    assert.deepEqual(w.waitingFor, ['r-lease', 'r-old']);
    await c.router.ackEpoch({ routerId: 'r-lease', epoch });
    await c.router.ackEpoch({ routerId: 'r-old', epoch });
    w = await c.jobs.awaitEpoch({ epoch, timeoutMs: 1_000n });
    assert.equal(w.reached, true);
    assert.deepEqual(w.gone, []);

    // A newer epoch: r-lease keeps renewing but does not ack; r-old goes quiet.
    const next = (await t.admin.splitRange({ keyspace: 'ks', lo: -9223372036854775808n })).epoch;
    const renewing = setInterval(
      () => void c.routerLease.renewRouterLease({ routerId: 'r-lease', epoch }).catch(() => {}),
      200,
    );
    try {
      w = await c.jobs.awaitEpoch({ epoch: next, timeoutMs: 300n });
      assert.equal(w.reached, false);
      assert.deepEqual(w.waitingFor, ['r-lease', 'r-old']);
      // r-old has no lease: it is left out once its heartbeat is older than routerStaleMs.
      w = await c.jobs.awaitEpoch({ epoch: next, timeoutMs: 2_500n });
      assert.equal(w.reached, false);
      assert.deepEqual(w.waitingFor, ['r-lease']);
      assert.deepEqual(w.gone, ['r-old']);
    } finally {
      clearInterval(renewing);
    }
    // r-lease stops renewing: once lease + margin passed it is gone too, and the wait ends.
    w = await c.jobs.awaitEpoch({ epoch: next, timeoutMs: 3_000n });
    assert.equal(w.reached, true);
    assert.deepEqual(w.gone.sort(), ['r-lease', 'r-old']);
    assert.ok(w.waitedMs >= 500n, `waited ${w.waitedMs} ms`);
    // Left out of `next`, it may not take a lease while routing by the older epoch.
    await assert.rejects(
      c.routerLease.renewRouterLease({ routerId: 'r-lease', epoch }),
      isCode(Code.FAILED_PRECONDITION),
    );
    await c.routerLease.renewRouterLease({ routerId: 'r-lease', epoch: next });
    await assert.rejects(
      c.routerLease.renewRouterLease({ routerId: 'nobody', epoch: next }),
      isCode(Code.NOT_FOUND),
    );
  } finally {
    c.close();
  }
});

test('AwaitEpoch ends when the acks it waits for come in during the wait', async () => {
  const c: Clients = clientsFor(t.coordinator.address);
  try {
    await c.routerLease.deregisterRouter({ routerId: 'r-lease' });
    const before = (await t.catalog.getCatalog({})).epoch;
    await c.router.registerRouter({ id: 'r-w1', address: 'a:4' });
    await c.router.registerRouter({ id: 'r-w2', address: 'a:5' });
    await c.routerLease.renewRouterLease({ routerId: 'r-w1', epoch: before });
    await c.routerLease.renewRouterLease({ routerId: 'r-w2', epoch: before });
    const epoch = (await t.admin.splitRange({ keyspace: 'ks', lo: 0n })).epoch;
    const waiting = c.jobs.awaitEpoch({ epoch, timeoutMs: 5_000n });
    await c.router.ackEpoch({ routerId: 'r-w1', epoch });
    await c.router.ackEpoch({ routerId: 'r-w2', epoch });
    const w = await waiting;
    assert.equal(w.reached, true);
    assert.deepEqual(w.waitingFor, []);
    assert.ok(w.waitedMs < 5_000n, `waited ${w.waitedMs} ms`);
  } finally {
    c.close();
  }
});
