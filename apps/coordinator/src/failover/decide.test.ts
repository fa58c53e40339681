import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplicaState } from '@tessera/proto';
import { decideFailover, type Decision } from './decide.js';
import { node, primaryReport, R, standbyReport, view } from './testing.js';

const kind = (d: Decision) => d.kind;

test('a healthy primary: nothing; a failover begun while it was away is cancelled', () => {
  assert.equal(
    kind(
      decideFailover({
        view: view(node(), primaryReport(), [standbyReport()]),
        leaseExpired: false,
      }),
    ),
    'none',
  );
  assert.equal(
    kind(
      decideFailover({
        view: view(node({ failingOver: true }), primaryReport(), [standbyReport()]),
        leaseExpired: false,
      }),
    ),
    'cancel',
  );
});

test('its agent says the primary is down: fence it, then promote the sync replica', () => {
  const d = decideFailover({
    view: view(node(), primaryReport({ reachable: false }), [standbyReport()]),
    leaseExpired: false,
  });
  assert.equal(d.kind, 'failover');
  if (d.kind !== 'failover') return;
  assert.equal(d.target.host, R.host);
  assert.equal(d.fenceFirst, true);
  assert.equal(d.fenced, false);
  const fenced = decideFailover({
    view: view(node(), primaryReport({ reachable: false, fenced: true }), [standbyReport()]),
    leaseExpired: false,
  });
  assert.ok(fenced.kind === 'failover' && fenced.fenced && !fenced.fenceFirst);
});

test('its agent is silent: wait for the lease, then promote without fencing', () => {
  const silent = view(node(), primaryReport(), [standbyReport()], 100);
  silent.primary!.ageMs = 10_000;
  const waiting = decideFailover({ view: silent, leaseExpired: false });
  assert.equal(waiting.kind, 'none');
  const d = decideFailover({ view: silent, leaseExpired: true });
  assert.ok(d.kind === 'failover' && !d.fenceFirst && !d.fenced);
  const never = view(node(), undefined, [standbyReport()]);
  assert.equal(kind(decideFailover({ view: never, leaseExpired: true })), 'failover');
});

test('only a replica recorded sync and reported as a reachable standby is promoted', () => {
  const down = primaryReport({ reachable: false });
  const notSync = node({ replicas: [{ ...R, state: ReplicaState.CATCHING_UP }] });
  assert.equal(
    kind(decideFailover({ view: view(notSync, down, [standbyReport()]), leaseExpired: true })),
    'restart',
  );
  const degraded = node({
    replicas: [{ ...R, state: ReplicaState.CATCHING_UP }],
    degraded: true,
    degradedReason: 'r stopped',
  });
  const d = decideFailover({
    view: view(degraded, primaryReport({ reachable: false, fenced: true }), [standbyReport()]),
    leaseExpired: true,
  });
  assert.equal(d.kind, 'refuse');
  if (d.kind === 'refuse') assert.match(d.reason, /degraded \(r stopped\)/);
  for (const r of [
    standbyReport({ reachable: false }),
    standbyReport({ inRecovery: false, fenced: true }),
  ])
    assert.equal(
      kind(decideFailover({ view: view(node(), down, [r]), leaseExpired: true })),
      'restart',
    );
  const stale = view(node(), down, [standbyReport()]);
  stale.replicas.get('10.0.0.2:5432')!.ageMs = 9_000;
  assert.equal(kind(decideFailover({ view: stale, leaseExpired: true })), 'restart');
  assert.equal(
    kind(decideFailover({ view: view(node({ replicas: [] }), down), leaseExpired: true })),
    'restart',
  );
  assert.equal(
    kind(decideFailover({ view: view(node({ replicas: [] }), undefined), leaseExpired: true })),
    'none',
  );
});

test('a replica already promoted (an interrupted failover) is recorded, fencing the old primary if it is back', () => {
  const promoted = standbyReport({ inRecovery: false, replica: false });
  const d = decideFailover({
    view: view(node(), primaryReport({ reachable: false }), [promoted]),
    leaseExpired: false,
  });
  assert.equal(d.kind, 'complete');
  const target = node({ failingOver: true, failoverTarget: '10.0.0.2:5432' });
  const back = decideFailover({
    view: view(target, primaryReport(), [promoted]),
    leaseExpired: false,
  });
  assert.ok(back.kind === 'complete' && back.fenceFirst);
  const split = decideFailover({
    view: view(node(), primaryReport(), [promoted]),
    leaseExpired: false,
  });
  assert.equal(split.kind, 'refuse');
});
