import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HaMode, ReplicaState } from '@tessera/proto';
import { followEngine } from './follow.js';
import { node, primaryReport, R, standbyReport, view } from './testing.js';

const patroni = (n = {}) => node({ haMode: HaMode.PATRONI, ...n });
const ha = (leader: string, over = {}) => ({
  leader,
  syncStandbys: ['10.0.0.2:5432'],
  phase: '',
  changing: false,
  timeline: 1n,
  error: '',
  ...over,
});

test('Patroni: hold while it has no leader, follow to a recorded sync replica, release when back', () => {
  const v = (n = patroni(), leader = '10.0.0.1:5432', over = {}) =>
    view(n, primaryReport({ mode: 'patroni', ha: ha(leader, over) }), [
      standbyReport({ mode: 'patroni', ha: ha(leader, over) }),
    ]);
  assert.equal(followEngine(v(), 1024n).kind, 'none');
  assert.equal(followEngine(v(patroni(), '', { changing: true }), 1024n).kind, 'hold');
  const move = followEngine(v(patroni(), '10.0.0.2:5432'), 1024n);
  assert.ok(move.kind === 'move' && move.to.host === R.host);
  assert.equal(followEngine(v(patroni({ failingOver: true })), 1024n).kind, 'release');
  const notSync = patroni({ replicas: [{ ...R, state: ReplicaState.CATCHING_UP }] });
  const refused = followEngine(v(notSync, '10.0.0.2:5432', { syncStandbys: [] }), 1024n);
  assert.ok(refused.kind === 'refuse' && /not in the recorded sync set/.test(refused.reason));
});

test("Patroni's synchronous standbys are mirrored into the catalog's sync set", () => {
  const catching = patroni({ replicas: [{ ...R, state: ReplicaState.CATCHING_UP }] });
  const v = view(catching, primaryReport({ mode: 'patroni', ha: ha('10.0.0.1:5432') }));
  const step = followEngine(v, 1024n);
  assert.ok(step.kind === 'sync' && step.states[0]?.state === 'sync');
  const dropped = view(
    patroni(),
    primaryReport({ mode: 'patroni', ha: ha('10.0.0.1:5432', { syncStandbys: [] }) }),
  );
  const s2 = followEngine(dropped, 1024n);
  assert.ok(s2.kind === 'sync' && s2.states[0]?.state === 'catching_up');
});

test("CloudNativePG: the sync set comes from the primary's pg_stat_replication", () => {
  const cnpg = node({ haMode: HaMode.CNPG, replicas: [{ ...R, state: ReplicaState.CATCHING_UP }] });
  const view1 = view(
    cnpg,
    primaryReport({
      mode: 'cnpg',
      ha: ha('10.0.0.1:5432', { syncStandbys: [] }),
      standbys: [
        {
          applicationName: 'd1_r',
          state: 'streaming',
          syncState: 'sync',
          flushLagBytes: 0n,
          replyAgeMs: 10n,
        },
      ],
    }),
  );
  const step = followEngine(view1, 1024n);
  assert.ok(step.kind === 'sync' && step.states[0]?.state === 'sync');
});
