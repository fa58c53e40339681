import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InstanceState, StandbyRow } from './probe.js';
import { selfFence, type FenceFacts } from './self-fence.js';

function standby(over: Partial<StandbyRow> = {}): StandbyRow {
  return {
    applicationName: 'd1_r',
    clientAddr: '127.0.0.1',
    state: 'streaming',
    syncState: 'sync',
    sentLsn: '0/1',
    flushLsn: '0/1',
    replayLsn: '0/1',
    flushLagBytes: 0n,
    replyAgeMs: 500n,
    ...over,
  };
}

function primary(over: Partial<InstanceState> = {}): InstanceState {
  return {
    inRecovery: false,
    currentLsn: '0/1',
    receivedLsn: '',
    replayedLsn: '',
    applyLagBytes: 0n,
    connections: 1,
    synchronousStandbyNames: 'FIRST 1 (d1_r)',
    dataDirectory: '/d',
    timeline: 1n,
    walReceiver: '',
    standbys: [standby()],
    slots: [],
    diskFreeBytes: 1n,
    ...over,
  };
}

function facts(over: Partial<FenceFacts> = {}): FenceFacts {
  return {
    mode: 'native',
    running: true,
    last: primary(),
    lastAgeMs: 100,
    reachable: true,
    fenced: false,
    leaseRemainingMs: 1000,
    failsafeReplyMs: 3000,
    freshMs: 2000,
    ...over,
  };
}

test('a primary with a lease left, or never granted one, keeps running', () => {
  assert.equal(selfFence(facts()).kind, 'none');
  assert.equal(selfFence(facts({ leaseRemainingMs: undefined })).kind, 'none');
});

test('a lapsed lease stops the primary unless its synchronous standby still streams from it', () => {
  const lapsed = { leaseRemainingMs: -10 };
  assert.equal(
    selfFence(facts(lapsed)).kind,
    'none',
    'failsafe: the standby streams, no one was promoted',
  );
  const cases: Partial<FenceFacts>[] = [
    { last: primary({ standbys: [] }) },
    { last: primary({ standbys: [standby({ state: 'catchup' })] }) },
    { last: primary({ standbys: [standby({ replyAgeMs: 9000n })] }) },
    { last: primary({ synchronousStandbyNames: '*' }) },
    { last: primary({ synchronousStandbyNames: 'FIRST 1 (d1_r, d1_s)' }) },
    { reachable: false },
    { lastAgeMs: 5000 },
    { failsafeReplyMs: 0 },
  ];
  for (const c of cases) {
    const a = selfFence(facts({ ...lapsed, ...c }));
    assert.equal(
      a.kind,
      'stop',
      JSON.stringify(c, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
    );
    if (a.kind === 'stop') assert.equal(a.because, 'lease');
  }
});

test('a lapsed lease leaves a primary that names no synchronous standby running: nothing can replace it', () => {
  const lapsed = { leaseRemainingMs: -10 };
  const alone = primary({ synchronousStandbyNames: '', standbys: [] });
  for (const c of [{}, { reachable: false }, { lastAgeMs: 5000 }] as Partial<FenceFacts>[])
    assert.equal(
      selfFence(facts({ ...lapsed, last: alone, ...c })).kind,
      'none',
      JSON.stringify(c),
    );
  assert.equal(selfFence(facts({ ...lapsed, last: alone, failsafeReplyMs: 0 })).kind, 'stop');
});

test('a fenced former primary that runs is stopped; standbys, stopped servers and followers are left alone', () => {
  const f = selfFence(facts({ fenced: true }));
  assert.equal(f.kind, 'stop');
  if (f.kind === 'stop') assert.equal(f.because, 'fenced');
  assert.equal(
    selfFence(facts({ leaseRemainingMs: -10, last: primary({ inRecovery: true }) })).kind,
    'none',
  );
  assert.equal(
    selfFence(facts({ leaseRemainingMs: -10, running: false, reachable: false })).kind,
    'none',
  );
  assert.equal(
    selfFence(facts({ leaseRemainingMs: -10, mode: 'patroni', reachable: false })).kind,
    'none',
  );
  // A frozen server (alive but not answering) with a lapsed lease is stopped.
  assert.equal(selfFence(facts({ leaseRemainingMs: -10, reachable: false })).kind, 'stop');
});
