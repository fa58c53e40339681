// The other services end to end (routers, jobs, the 2PC log, agent reports), reflection as
// grpcurl uses it, and the Prometheus endpoint.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  Code,
  Decision,
  JobState,
  NodeRole,
  RpcError,
  createClient,
  reflectionFileContaining,
  reflectionListServices,
  type DescMessage,
  type UnaryCall,
} from '@tessera/proto';
import {
  freshDatabase,
  startPostgres,
  startTestCoordinator,
  type PgServer,
  type TestCoordinator,
} from '../testing.js';

let server: PgServer;
let t: TestCoordinator;
before(async () => {
  server = await startPostgres({ name: 'services' });
  t = await startTestCoordinator(await freshDatabase(server));
  await t.admin.addNode({ name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME });
});
after(async () => {
  await t.stop();
  await server.dispose();
});

const isCode = (code: Code) => (e: unknown) => e instanceof RpcError && e.code === code;

test('reflection lists the services, and a client built only from reflection calls GetCatalog', async () => {
  const names = await reflectionListServices(t.coordinator.address);
  for (const s of ['Admin', 'Agent', 'Catalog', 'Job', 'Router', 'RouterLease', 'Txn'])
    assert.ok(names.includes(`tessera.v1.${s}Service`), names.join());
  const registry = await reflectionFileContaining(
    t.coordinator.address,
    'tessera.v1.CatalogService',
  );
  const service = registry.getService('tessera.v1.CatalogService');
  assert.ok(service);
  const client = createClient(service, t.coordinator.address);
  try {
    const getCatalog = client['getCatalog'] as UnaryCall<DescMessage, DescMessage>;
    const catalog = (await getCatalog({})) as unknown as {
      epoch: bigint;
      nodes: { name: string }[];
    };
    assert.equal(catalog.epoch, 2n);
    assert.deepEqual(
      catalog.nodes.map((n) => n.name),
      ['home'],
    );
  } finally {
    client.close();
  }
});

test('routers register, ack epochs as heartbeats, and are listed', async () => {
  const { epoch } = await t.router.registerRouter({ id: 'r1', address: '127.0.0.1:6432' });
  assert.equal(epoch, 2n);
  await t.router.ackEpoch({ routerId: 'r1', epoch: 2n });
  await t.router.registerRouter({ id: 'r0', address: '127.0.0.1:6433' });
  const { routers } = await t.router.listRouters({});
  assert.deepEqual(
    routers.map((r) => [r.id, r.address, r.ackedEpoch]),
    [
      ['r0', '127.0.0.1:6433', 0n],
      ['r1', '127.0.0.1:6432', 2n],
    ],
  );
  assert.ok(Math.abs(Number(routers[1]!.lastHeartbeatMs) - Date.now()) < 60_000);
  await assert.rejects(t.router.ackEpoch({ routerId: 'ghost', epoch: 1n }), isCode(Code.NOT_FOUND));
});

test('jobs: submitted whole, claimed oldest first (once), progressed step by step, cancelled by their mover', async () => {
  const a = await t.jobs.submitJob({
    kind: 'split',
    specJson: '{"keyspace":"k"}',
    steps: ['copy', 'cutover'],
  });
  const b = await t.jobs.submitJob({ kind: 'move', specJson: '', steps: ['copy'] });
  assert.equal(a.state, JobState.PENDING);
  assert.deepEqual(
    a.steps.map((s) => [s.index, s.name, s.state]),
    [
      [0, 'copy', JobState.PENDING],
      [1, 'cutover', JobState.PENDING],
    ],
  );
  assert.equal(JSON.parse(a.specJson).keyspace, 'k');
  await assert.rejects(
    t.jobs.submitJob({ kind: 'x', specJson: '{', steps: ['a'] }),
    isCode(Code.INVALID_ARGUMENT),
  );

  // Two movers claim at once: each gets a different job.
  const [c1, c2] = await Promise.all([
    t.jobs.claimJob({ moverId: 'm1' }),
    t.jobs.claimJob({ moverId: 'm2' }),
  ]);
  assert.deepEqual(new Set([c1.job?.id, c2.job?.id]), new Set([a.id, b.id]));
  assert.equal((await t.jobs.claimJob({ moverId: 'm3' })).job, undefined);
  const m1Job = c1.job!;
  // A restarted mover resumes its own running job.
  assert.equal((await t.jobs.claimJob({ moverId: 'm1' })).job?.id, m1Job.id);

  let job = await t.jobs.reportStep({
    jobId: a.id,
    stepIndex: 0,
    state: JobState.DONE,
    progressJson: '{"rows":10}',
  });
  assert.equal(job.steps[0]!.state, JobState.DONE);
  assert.equal(JSON.parse(job.steps[0]!.progressJson).rows, 10);
  assert.equal(job.state, JobState.RUNNING);
  job = await t.jobs.reportStep({ jobId: a.id, stepIndex: 1, state: JobState.DONE });
  assert.equal(job.state, JobState.DONE);
  await assert.rejects(t.jobs.cancelJob({ id: a.id }), isCode(Code.FAILED_PRECONDITION));

  // A running job is not cancelled behind its mover's back: it becomes CANCELLING, and the
  // mover (which undoes what it did) finishes it.
  const cancelling = await t.jobs.cancelJob({ id: b.id });
  assert.equal(cancelling.state, JobState.CANCELLING);
  const cancelled = await t.jobs.finishJob({
    jobId: b.id,
    moverId: cancelling.claimedBy,
    state: JobState.CANCELLED,
  });
  assert.equal(cancelled.state, JobState.CANCELLED);
  await assert.rejects(
    t.jobs.reportStep({ jobId: b.id, stepIndex: 0, state: JobState.DONE }),
    isCode(Code.FAILED_PRECONDITION),
  );
  await assert.rejects(t.jobs.getJob({ id: 999n }), isCode(Code.NOT_FOUND));
  assert.deepEqual((await t.jobs.listJobs({})).jobs, []);
  assert.deepEqual(
    (await t.jobs.listJobs({ all: true })).jobs.map((j) => j.id),
    [a.id, b.id],
  );
  assert.equal((await t.jobs.getJob({ id: b.id })).steps[0]!.state, JobState.CANCELLED);
});

test('2PC decisions: the first one logged wins, and an unknown txid is NOT_FOUND', async () => {
  const first = await t.txn.decide({
    txid: 'tx-1',
    decision: Decision.COMMIT,
    participants: ['a', 'b'],
  });
  assert.equal(first.decision, Decision.COMMIT);
  const second = await t.txn.decide({
    txid: 'tx-1',
    decision: Decision.ABORT,
    participants: ['a'],
  });
  assert.equal(second.decision, Decision.COMMIT);
  // Racing decisions for one txid all answer the same.
  const raced = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      t.txn.decide({
        txid: 'tx-2',
        decision: i % 2 ? Decision.COMMIT : Decision.ABORT,
        participants: ['a'],
      }),
    ),
  );
  assert.equal(new Set(raced.map((r) => r.decision)).size, 1);
  const record = await t.txn.getDecision({ txid: 'tx-1' });
  assert.deepEqual(
    [record.txid, record.decision, record.participants],
    ['tx-1', Decision.COMMIT, ['a', 'b']],
  );
  await assert.rejects(
    t.txn.getDecision({ txid: 'nope' }),
    (e: unknown) => isCode(Code.NOT_FOUND)(e) && /no decision is logged/.test(String(e)),
  );
  await assert.rejects(
    t.txn.decide({ txid: 'tx-3', decision: Decision.UNSPECIFIED, participants: [] }),
    isCode(Code.INVALID_ARGUMENT),
  );
});

test('agent reports are kept per node and exported; /metrics has gRPC counts and latencies', async () => {
  const stream = t.agent.report();
  stream.send({ node: 'home', reachable: true, atMs: BigInt(Date.now()) });
  stream.send({ node: 'home', replica: true, inRecovery: true, reachable: false });
  stream.end();
  for await (const _ of stream) assert.fail('no directives yet');

  const res = await fetch(`http://127.0.0.1:${t.coordinator.metricsPort}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(
    text,
    /tessera_grpc_server_calls_total\{[^}]*service="tessera.v1.CatalogService",method="GetCatalog",code="OK"[^}]*\} [1-9]/,
  );
  assert.match(
    text,
    /tessera_grpc_server_calls_total\{[^}]*method="GetDecision",code="NOT_FOUND"[^}]*\} 1/,
  );
  assert.match(text, /tessera_grpc_server_call_duration_seconds_bucket\{[^}]*method="AddNode"/);
  assert.match(text, /tessera_grpc_server_call_duration_seconds_count\{[^}]*method="Decide"/);
  assert.match(text, /tessera_catalog_epoch\{[^}]*\} 2/);
  assert.match(text, /tessera_coordinator_active\{[^}]*\} 1/);
  assert.match(text, /tessera_node_reachable\{node="home",replica="false"[^}]*\} 1/);
  assert.match(text, /tessera_node_reachable\{node="home",replica="true"[^}]*\} 0/);
});
