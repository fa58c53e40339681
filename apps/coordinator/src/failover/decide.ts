// Whether a node fails over now, and to which replica (pure). The rules (DESIGN.md section 7,
// research/failover.md 3.2): only a replica recorded in the durable sync set is promoted, and
// only once the primary cannot take writes: its agent says it is down (and is told to fence it
// before anything else happens), or its agent is gone and the primary's lease plus margin has
// passed since the last grant. With no eligible replica, a primary whose agent still runs is
// started again (it is the only copy with every acknowledged commit); otherwise the failover is
// refused and the reason shown.
import { ReplicaState, type Replica } from '@tessera/proto';
import { addressOf, isFresh, lsnValue, replicaSeen, type NodeView } from './facts.js';

export type Decision =
  | { kind: 'none'; waiting?: string }
  /** A failover was begun but the primary is back: routers stop holding. */
  | { kind: 'cancel'; reason: string }
  | { kind: 'refuse'; reason: string }
  | { kind: 'restart'; reason: string }
  /**
   * Promote `target`. The old primary is fenced by its agent first when the agent said it is down
   * (`fenceFirst`), is known fenced already (`fenced`: its agent says so), or else its lease lapsed.
   */
  | { kind: 'failover'; target: Replica; fenceFirst: boolean; fenced: boolean; reason: string }
  /** `target` was promoted already (a failover interrupted before its last step): record it. */
  | { kind: 'complete'; target: Replica; fenceFirst: boolean; fenced: boolean; reason: string };

export interface DecideInput {
  view: NodeView;
  /** Lease plus margin has passed since the last grant to the primary (or since activation). */
  leaseExpired: boolean;
}

export function decideFailover({ view, leaseExpired }: DecideInput): Decision {
  const { node, freshMs } = view;
  const p = isFresh(view.primary, freshMs) ? view.primary.report : undefined;
  const primaryUp =
    p !== undefined && p.reachable && !p.inRecovery && !p.fenced && !p.stoppedByLease;
  // A replica that reports being a primary was promoted by someone: by us, if it is the target.
  const promoted = node.replicas.filter((r) => {
    const s = replicaSeen(view, r)?.report;
    return s !== undefined && s.reachable && !s.inRecovery && !s.fenced;
  });
  const target = node.failingOver ? promoted.find((r) => isTarget(view, r)) : undefined;

  if (primaryUp) {
    if (target)
      return {
        kind: 'complete',
        target,
        fenceFirst: true,
        fenced: false,
        reason: `${addressOf(target)} was promoted while ${node.host}:${node.port} came back; the former is the primary`,
      };
    if (promoted.length > 0)
      return {
        kind: 'refuse',
        reason: `both ${node.host}:${node.port} (the catalog's primary) and ${promoted.map(addressOf).join(', ')} report being primaries; nothing is changed until one is stopped`,
      };
    if (node.failingOver) return { kind: 'cancel', reason: 'the primary answers again' };
    return { kind: 'none' };
  }

  // A node no agent reports for is not watched at all (no agents deployed for it).
  if (view.primary === undefined && view.replicas.size === 0) return { kind: 'none' };
  const agentSaysDown =
    p !== undefined && (!p.reachable || p.stoppedByLease || p.fenced || p.inRecovery);
  const agentGone = p === undefined;
  if (!agentSaysDown && !(agentGone && leaseExpired))
    return {
      kind: 'none',
      waiting: "the primary's agent is silent; waiting for its lease to lapse",
    };
  const fenceFirst = agentSaysDown && !p.fenced;
  const fenced = p?.fenced === true;
  const why = agentSaysDown
    ? `its agent reports ${p.fenced ? 'it fenced' : p.stoppedByLease ? 'it stopped for a lapsed lease' : p.inRecovery ? 'it is in recovery' : `it unreachable (${p.error || 'no answer'})`}`
    : 'its agent is silent and its lease lapsed';

  const synced = promoted.find((r) => r.state === ReplicaState.SYNC || isTarget(view, r));
  if (synced)
    return {
      kind: 'complete',
      target: synced,
      fenceFirst,
      fenced,
      reason: `the primary is down (${why}) and ${addressOf(synced)} was promoted`,
    };

  const best = eligibleReplicas(view)[0];
  if (best)
    return {
      kind: 'failover',
      target: best,
      fenceFirst,
      fenced,
      reason: `the primary is down (${why})`,
    };

  const because = noCandidate(view);
  if (p !== undefined && !p.fenced && !p.inRecovery && (!p.reachable || p.stoppedByLease))
    return { kind: 'restart', reason: `the primary is down (${why}) and ${because}` };
  return {
    kind: 'refuse',
    reason: `failover refused: the primary is down (${why}) and ${because}`,
  };
}

/**
 * The replicas a failover may promote now, best first: recorded synchronous, and reported by their
 * agents as reachable standbys (the most WAL received first).
 */
export function eligibleReplicas(view: NodeView): Replica[] {
  return view.node.replicas
    .filter((r) => r.state === ReplicaState.SYNC)
    .map((r) => ({ r, s: replicaSeen(view, r)?.report }))
    .filter((x) => x.s !== undefined && x.s.reachable && x.s.inRecovery && !x.s.fenced)
    .sort((a, b) => Number(lsnValue(b.s!.receivedLsn) - lsnValue(a.s!.receivedLsn)))
    .map((x) => x.r);
}

function isTarget(view: NodeView, r: Replica): boolean {
  return view.node.failoverTarget !== '' && view.node.failoverTarget === addressOf(r);
}

/** Why no replica can be promoted, as the end of a sentence. */
function noCandidate(view: NodeView): string {
  const { node } = view;
  if (node.replicas.length === 0) return 'the node has no replica';
  const sync = node.replicas.filter((r) => r.state === ReplicaState.SYNC);
  if (sync.length === 0)
    return node.degraded
      ? `the node is degraded (${node.degradedReason || 'no synchronous replica'}): no replica has every acknowledged commit`
      : 'no replica is recorded synchronous yet';
  return `its synchronous replica ${sync.map(addressOf).join(', ')} does not report as a reachable standby`;
}
