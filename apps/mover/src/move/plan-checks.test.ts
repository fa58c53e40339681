// The plan checks on a real cluster: a --plan job answers the whole plan and changes nothing; a
// move whose keyspace has a table without its key in the replica identity, a partitioned table or
// a partition, or whose source has a pending prepared transaction, is refused with one sentence
// before it creates anything; a Tessera prepared transaction that 2PC recovery resolves is
// waited for.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { hashKeyText } from '@tessera/pg-hash';
import { JobState } from '@tessera/proto';
import {
  moveRequest,
  replicationLeftovers,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';
import type { MovePlan } from './spec.js';

let c: MoverCluster;

before(async () => {
  c = await startMoverCluster({
    tables: [
      { name: 'accounts', keyColumn: 'id' },
      { name: 'loose', keyColumn: 'tenant' },
    ],
    schema: [
      `create table accounts (id bigint primary key, balance bigint not null default 0)`,
      `create table loose (id bigint not null, tenant bigint not null, v int)`,
    ],
  });
  // A primary key without the shard key: the router refuses one, so it is made on the nodes
  // themselves (as a table made before it was declared, or bypassing the router, can have).
  for (const s of c.byName.values()) await s.query('alter table loose add primary key (id)');
  await c.startMover({ preparedWaitMs: 4_000 });
});
after(async () => {
  await c?.dispose();
});

async function sourceRange() {
  const cat = await c.catalog.getCatalog({});
  return cat.ranges.find((r) => r.keyspace === 'accounts' && r.owner === 'data1')!;
}

async function nothingChanged(epochBefore: bigint) {
  const cat = await c.catalog.getCatalog({});
  assert.deepEqual(cat.moves, []);
  assert.equal(cat.epoch, epochBefore, 'no catalog change at all');
  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
}

test('a --plan job answers the plan with its refusals and changes nothing; the move is refused', async () => {
  const r = await sourceRange();
  const epoch = (await c.catalog.getCatalog({})).epoch;
  const planned = await waitForJob(
    c.jobs,
    (await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2', true))).id,
  );
  assert.equal(planned.state, JobState.DONE, planned.error);
  const plan = JSON.parse(planned.resultJson).plan as MovePlan;
  assert.equal(plan.source, 'data1');
  assert.equal(plan.target, 'data2');
  assert.equal(plan.steps.length, 8);
  assert.deepEqual(
    plan.databases.map((d) => [d.name, d.tables.map((t) => t.name)]),
    [['postgres', ['accounts', 'loose']]],
  );
  assert.equal(plan.refusals.length, 1);
  assert.match(
    plan.refusals[0]!,
    /table public\.loose \(database postgres\) has replica identity \(id\), which does not contain its key column tenant/,
  );
  for (const name of [
    'wal_level',
    'replication slots',
    'max_slot_wal_keep_size',
    'prepared transactions',
    'privileges',
    'partitioning',
    'disk',
  ])
    assert.ok(
      plan.checks.some((x) => x.name === name && x.ok),
      `check ${name} passed: ${JSON.stringify(plan.checks)}`,
    );
  await nothingChanged(epoch);

  const moved = await waitForJob(
    c.jobs,
    (await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2'))).id,
  );
  assert.equal(moved.state, JobState.FAILED);
  assert.match(moved.error, /^table public\.loose .* does not contain its key column tenant/);
  await nothingChanged(epoch);
  // The fix the sentence names makes the move possible.
  for (const s of c.byName.values()) {
    await s.query(`create unique index loose_tenant_id on loose (tenant, id)`);
    await s.query(`alter table loose replica identity using index loose_tenant_id`);
  }
  const replanned = await waitForJob(
    c.jobs,
    (await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2', true))).id,
  );
  assert.deepEqual((JSON.parse(replanned.resultJson).plan as MovePlan).refusals, []);
});

test('a prepared transaction on the source refuses the move; a Tessera one resolved by recovery is waited for', async () => {
  const r = await sourceRange();
  const data1 = c.byName.get('data1')!;
  const epoch = (await c.catalog.getCatalog({})).epoch;
  const owned = Array.from({ length: 5000 }, (_, i) => BigInt(i + 1)).find((k) => {
    const h = hashKeyText('bigint', k.toString(), 0n);
    return r.lo <= h && h <= r.hi;
  })!;
  const session = await data1.connect();
  try {
    await session.query(
      `begin; insert into accounts (id) values (${owned}); prepare transaction 'app-batch-7'`,
    );
    const refused = await waitForJob(
      c.jobs,
      (await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2'))).id,
    );
    assert.equal(refused.state, JobState.FAILED);
    assert.match(
      refused.error,
      /prepared transaction 'app-batch-7' .* that Tessera did not make; it blocks the move's replication slot/,
    );
    await nothingChanged(epoch);
    await session.query(`rollback prepared 'app-batch-7'`);

    // A gid of this cluster with no decision: recovery aborts it after its grace (2 s here), and
    // the plan waits for that (up to 4 s).
    const uid = (await c.catalog.getCatalog({})).clusterUid;
    await session.query(
      `begin; insert into accounts (id) values (${owned}); prepare transaction 'tessera:${uid}:t-1:data1'`,
    );
    const waited = await waitForJob(
      c.jobs,
      (await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2', true))).id,
    );
    const plan = JSON.parse(waited.resultJson).plan as MovePlan;
    assert.deepEqual(plan.refusals, []);
    assert.match(plan.warnings.join(' '), /waited \d+ s for 2PC recovery on data1/);
    assert.equal((await data1.query('select 1 from pg_prepared_xacts')).length, 0);

    // One recovery never resolves (another cluster's gid) is refused after the wait.
    await session.query(
      `begin; insert into accounts (id) values (${owned}); prepare transaction 'tessera:other-cluster:t-2:data1'`,
    );
    const stuck = await waitForJob(
      c.jobs,
      (await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2'))).id,
    );
    assert.equal(stuck.state, JobState.FAILED);
    assert.match(
      stuck.error,
      /1 pending Tessera prepared transaction\(s\) \(oldest tessera:other-cluster:t-2:data1\) that 2PC recovery did not resolve within 4 s/,
    );
    await session.query(`rollback prepared 'tessera:other-cluster:t-2:data1'`);
  } finally {
    await session.end();
  }
});

test('a partitioned table of the keyspace, or a partition, refuses the move before anything is created', async () => {
  // The router gives every node a declared table's CREATE TABLE ... PARTITION BY; here the parent
  // and a partition, both declared, are made on the nodes themselves, like loose's key above.
  for (const name of ['events', 'events_0'])
    await c.admin.distributeTable({ name, keyColumn: 'id', keyspace: 'accounts' });
  for (const s of c.byName.values()) {
    await s.query(`create table events (id bigint primary key, v int) partition by hash (id)`);
    for (const i of [0, 1])
      await s.query(
        `create table events_${i} partition of events for values with (modulus 2, remainder ${i})`,
      );
  }
  try {
    const r = await sourceRange();
    const epoch = (await c.catalog.getCatalog({})).epoch;
    const moved = await waitForJob(
      c.jobs,
      (await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2'))).id,
    );
    assert.equal(moved.state, JobState.FAILED);
    assert.match(
      moved.error,
      /table public\.events \(database postgres\) is partitioned; moving ranges of partitioned tables is not supported yet: the move's copy \(SELECT \.\.\. FROM ONLY\) would read none of its rows/,
    );
    assert.match(
      moved.error,
      /table public\.events_0 \(database postgres\) is a partition of public\.events; moving ranges of partitioned tables is not supported yet/,
    );
    await nothingChanged(epoch);
  } finally {
    for (const s of c.byName.values()) await s.query('drop table events');
    for (const name of ['events', 'events_0']) await c.admin.dropTable({ name });
  }
});
