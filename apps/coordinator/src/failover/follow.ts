// Following an HA engine that decides a node's failovers itself (pure): Patroni or CloudNativePG.
// The agents report the engine's view; Tessera never promotes, it holds the node's statements
// while the engine changes primary, re-routes once it has a new one, and keeps its own record of
// the sync set: Patroni's synchronous standbys as Patroni names them, CloudNativePG's from the
// primary's pg_stat_replication (CloudNativePG keeps none it could be asked for). A promotion of
// an instance outside that record is not followed: it may lack acknowledged commits.
import { HaMode, ReplicaState, type HaView, type Replica } from '@tessera/proto';
import { addressOf, isFresh, type NodeView } from './facts.js';
import { streaming } from './sync-plan.js';

export type FollowStep =
  | { kind: 'none' }
  | { kind: 'hold'; reason: string }
  | { kind: 'release'; reason: string }
  | { kind: 'move'; to: Replica; reason: string }
  | { kind: 'refuse'; reason: string }
  | { kind: 'sync'; states: { replica: Replica; state: 'catching_up' | 'sync' }[]; reason: string };

/** The freshest readable view among the node's agents' reports (its primary's first). */
export function engineView(view: NodeView): HaView | undefined {
  const seen = [view.primary, ...view.replicas.values()].filter(
    (s): s is NonNullable<typeof s> =>
      isFresh(s, view.freshMs) && s.report.ha !== undefined && s.report.ha.error === '',
  );
  seen.sort((a, b) => a.ageMs - b.ageMs);
  return seen[0]?.report.ha;
}

export function followEngine(view: NodeView, catchUpBytes: bigint): FollowStep {
  const { node } = view;
  const engine = node.haMode === HaMode.PATRONI ? 'Patroni' : 'CloudNativePG';
  const ha = engineView(view);
  if (!ha) return { kind: 'none' };
  const primaryAddr = addressOf(node);
  if (ha.changing || ha.leader === '') {
    if (node.failingOver) return { kind: 'none' };
    return {
      kind: 'hold',
      reason: `${engine} is changing the primary (${ha.phase || 'no leader'})`,
    };
  }
  if (ha.leader !== primaryAddr) {
    const to = node.replicas.find((r) => addressOf(r) === ha.leader);
    if (to && to.state === ReplicaState.SYNC)
      return {
        kind: 'move',
        to,
        reason: `${engine} promoted ${ha.leader}, a recorded synchronous replica`,
      };
    return {
      kind: 'refuse',
      reason: `refusing to follow ${engine}'s promotion of ${ha.leader}: it is not in the recorded sync set of node ${node.name}, so it may lack acknowledged commits`,
    };
  }
  if (node.failingOver)
    return { kind: 'release', reason: `${engine}'s primary is ${ha.leader} again` };

  // Mirror the sync set.
  const isSync = (r: Replica): boolean => {
    if (node.haMode === HaMode.PATRONI) return ha.syncStandbys.includes(addressOf(r));
    const p = isFresh(view.primary, view.freshMs) ? view.primary.report : undefined;
    if (!p || !p.reachable || p.inRecovery) return r.state === ReplicaState.SYNC; // unknown: keep
    const row = streaming(p, r.name);
    return row !== undefined && row.syncState === 'sync' && row.flushLagBytes <= catchUpBytes;
  };
  const states = node.replicas
    .filter((r) => r.state === ReplicaState.SYNC || r.state === ReplicaState.CATCHING_UP)
    .map((r) => ({ replica: r, want: isSync(r) }))
    .filter((x) => x.want !== (x.replica.state === ReplicaState.SYNC))
    .map((x) => ({
      replica: x.replica,
      state: x.want ? ('sync' as const) : ('catching_up' as const),
    }));
  if (states.length > 0)
    return {
      kind: 'sync',
      states,
      reason: `${engine}'s synchronous standbys: ${node.haMode === HaMode.PATRONI ? ha.syncStandbys.join(', ') || 'none' : 'from pg_stat_replication'}`,
    };
  return { kind: 'none' };
}
