import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplicaState } from '@tessera/proto';
import { desiredNames, planSync, type SyncInput } from './sync-plan.js';
import { node, primaryReport, R } from './testing.js';

const row = (over = {}) => ({
  applicationName: 'd1_r',
  state: 'streaming',
  syncState: 'sync',
  flushLsn: '0/3000000',
  flushLagBytes: 0n,
  replyAgeMs: 100n,
  ...over,
});

function input(over: Partial<SyncInput> = {}): SyncInput {
  return {
    node: node(),
    primary: primaryReport({ standbys: [row()] }),
    durability: 'preferred',
    notStreamingMs: new Map(),
    graceMs: 2_000,
    adding: undefined,
    catchUpBytes: 1024n,
    ...over,
  };
}

test('names: FIRST n of the sync set; required waits for any replica when none is sync', () => {
  assert.equal(desiredNames(node(), 'preferred', undefined), 'FIRST 1 (d1_r)');
  const none = node({ replicas: [{ ...R, state: ReplicaState.FENCED }] });
  assert.equal(desiredNames(none, 'preferred', undefined), '');
  assert.equal(desiredNames(none, 'required', undefined), 'FIRST 1 (d1_r)');
  assert.equal(desiredNames(node({ replicas: [] }), 'required', undefined), '');
});

test('a healthy sync set asks for nothing', () => {
  assert.deepEqual(planSync(input()), { kind: 'none' });
});

test('joining: named first, recorded sync only once it streams as sync past the LSN it was named at', () => {
  const catching = node({ replicas: [{ ...R, state: ReplicaState.CATCHING_UP }] });
  const unnamed = primaryReport({
    synchronousStandbyNames: '',
    standbys: [row({ syncState: 'async' })],
  });
  const a = planSync(input({ node: catching, primary: unnamed }));
  assert.equal(a.kind, 'adding');
  const adding = a.kind === 'adding' ? a.adding : undefined;
  const b = planSync(input({ node: catching, primary: unnamed, adding }));
  assert.deepEqual(b.kind === 'names' && b.value, 'FIRST 1 (d1_r)');
  const named = primaryReport({ lsn: '0/5000000', standbys: [row({ flushLsn: '0/4000000' })] });
  const c = planSync(input({ node: catching, primary: named, adding }));
  assert.ok(c.kind === 'adding' && c.adding?.lsn0 === 0x5000000n);
  const behind = planSync(
    input({ node: catching, primary: named, adding: { name: 'd1_r', lsn0: 0x5000000n } }),
  );
  assert.equal(behind.kind, 'none', 'not before it flushed what was written before it was named');
  const caught = primaryReport({ standbys: [row({ flushLsn: '0/5000000' })] });
  const d = planSync(
    input({ node: catching, primary: caught, adding: { name: 'd1_r', lsn0: 0x5000000n } }),
  );
  assert.ok(d.kind === 'record' && d.states[0]?.state === 'sync');
  const lagging = primaryReport({
    synchronousStandbyNames: '',
    standbys: [row({ flushLagBytes: 99_999n })],
  });
  assert.equal(
    planSync(input({ node: catching, primary: lagging })).kind,
    'none',
    'not while it lags',
  );
});

test('lost, preferred: out of the catalog set first (degraded), then out of synchronous_standby_names', () => {
  const gone = primaryReport({ standbys: [] });
  assert.equal(
    planSync(input({ primary: gone, notStreamingMs: new Map([['d1_r', 500]]) })).kind,
    'none',
    'within the grace',
  );
  const step = planSync(input({ primary: gone, notStreamingMs: new Map([['d1_r', 2_500]]) }));
  assert.ok(
    step.kind === 'record' && step.states[0]?.state === 'catching_up' && step.degraded?.on === true,
  );
  const after = node({ replicas: [{ ...R, state: ReplicaState.CATCHING_UP }], degraded: true });
  const names = planSync(input({ node: after, primary: gone }));
  assert.ok(names.kind === 'names' && names.value === '');
  const frozen = primaryReport({ standbys: [row({ replyAgeMs: 60_000n })] });
  assert.equal(
    planSync(input({ primary: frozen, notStreamingMs: new Map([['d1_r', 2_500]]) })).kind,
    'record',
  );
});

test('lost, required: it stays in the set, commits wait, the node is degraded until it streams again', () => {
  const gone = primaryReport({ standbys: [] });
  const step = planSync(
    input({ durability: 'required', primary: gone, notStreamingMs: new Map([['d1_r', 2_500]]) }),
  );
  assert.ok(step.kind === 'record' && step.states.length === 0 && step.degraded?.on === true);
  assert.match(step.kind === 'record' ? step.degraded!.reason : '', /commits wait/);
  const back = planSync(input({ durability: 'required', node: node({ degraded: true }) }));
  assert.ok(back.kind === 'record' && back.degraded?.on === false);
});
