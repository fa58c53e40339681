// When the agent stops its own primary (pure, so every case is a unit test). A primary whose
// lease lapsed may have been given up by the coordinator, which promotes its synchronous replica
// once lease plus margin has passed; the primary must be down by then. One exception, after
// Patroni's failsafe mode: while every standby named in synchronous_standby_names still streams
// from this primary and replied lately, none of them has been promoted, so a coordinator that is
// merely away (being replaced, or following the catalog to a new home) does not stop the cluster.
// And a primary that names no synchronous standby keeps running: no replica can replace it.
import type { AgentMode } from './config.js';
import type { InstanceState } from './probe.js';
import { parseStandbyNames } from './standby-names.js';

export interface FenceFacts {
  mode: AgentMode;
  /** The postmaster runs (as far as the data directory tells; undefined without --data-dir). */
  running: boolean | undefined;
  /** Last probe that answered, and how long ago. */
  last: InstanceState | undefined;
  lastAgeMs: number;
  reachable: boolean;
  fenced: boolean;
  /** undefined: never granted (not enforced yet). */
  leaseRemainingMs: number | undefined;
  failsafeReplyMs: number;
  /** A probe older than this does not count for the failsafe. */
  freshMs: number;
}

export type FenceAction =
  { kind: 'none' } | { kind: 'stop'; because: 'fenced' | 'lease'; detail: string };

const NONE: FenceAction = { kind: 'none' };

export function selfFence(f: FenceFacts): FenceAction {
  if (f.mode !== 'native') return NONE;
  const up = f.running ?? f.reachable;
  if (!up) return NONE;
  if (f.fenced)
    return { kind: 'stop', because: 'fenced', detail: 'a fenced former primary is running' };
  const wasPrimary = f.last !== undefined && !f.last.inRecovery;
  if (!wasPrimary || f.leaseRemainingMs === undefined || f.leaseRemainingMs > 0) return NONE;
  const why = failsafeBroken(f);
  if (why === undefined) return NONE;
  return {
    kind: 'stop',
    because: 'lease',
    detail: `the lease lapsed ${Math.round(-f.leaseRemainingMs)} ms ago and ${why}`,
  };
}

/** Why the failsafe does not hold, or undefined when it does (keep running). */
export function failsafeBroken(f: FenceFacts): string | undefined {
  if (f.failsafeReplyMs === 0) return 'the failsafe is off';
  if (!f.last) return 'the server does not answer';
  const { names, any } = parseStandbyNames(f.last.synchronousStandbyNames);
  // No standby named: none has every acknowledged commit, so none is ever promoted in its place
  // (the catalog's sync set is always within the names: a replica is named before it is recorded
  // and unrecorded before it is unnamed, and every names change goes through this agent, whose
  // last probe is at least as new as anything the coordinator saw). Stopping it would only turn a
  // slow node (a loaded machine, a long checkpoint) into a dead one, e.g. while a former primary
  // rejoins from it.
  if (!any && names.length === 0) return undefined;
  if (!f.reachable || f.lastAgeMs > f.freshMs) return 'the server does not answer';
  if (any) return 'synchronous_standby_names is *, so no standby can be checked';
  for (const name of names) {
    const s = f.last.standbys.find((r) => r.applicationName.toLowerCase() === name.toLowerCase());
    if (!s || s.state !== 'streaming')
      return `synchronous standby ${name} does not stream from it (it may have been promoted)`;
    if (s.replyAgeMs < 0n || s.replyAgeMs > BigInt(f.failsafeReplyMs))
      return `synchronous standby ${name} has not replied for ${s.replyAgeMs} ms`;
  }
  return undefined;
}
