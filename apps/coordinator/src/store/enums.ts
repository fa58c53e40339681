// How the catalog's enums are spelled in the catalog database (readable text, checked by
// constraints) and the proto enums they stand for. Every switch is exhaustive.
import {
  Decision,
  HaMode,
  JobState,
  NodeRole,
  NodeState,
  RangeState,
  ReplicaState,
  TableKind,
} from '@tessera/proto';

export type NodeRoleText = 'home' | 'data';
export type NodeStateText = 'joining' | 'active' | 'draining' | 'removed';
export type RangeStateText = 'active' | 'frozen';
export type TableKindText = 'sharded' | 'reference' | 'global';
export type JobStateText =
  'pending' | 'running' | 'done' | 'failed' | 'cancelled' | 'cancelling' | 'verify_failed';
export type DecisionText = 'commit' | 'abort';
export type ReplicaStateText = 'catching_up' | 'sync' | 'fenced' | 'rejoining';
export type HaModeText = 'native' | 'patroni' | 'cnpg';

function assertNever(x: never, what: string): never {
  throw new TypeError(`unknown ${what} ${String(x)}`);
}

export function nodeRoleFromText(t: NodeRoleText): NodeRole {
  switch (t) {
    case 'home':
      return NodeRole.HOME;
    case 'data':
      return NodeRole.DATA;
    default:
      return assertNever(t, 'node role');
  }
}

export function nodeStateFromText(t: NodeStateText): NodeState {
  switch (t) {
    case 'joining':
      return NodeState.JOINING;
    case 'active':
      return NodeState.ACTIVE;
    case 'draining':
      return NodeState.DRAINING;
    case 'removed':
      return NodeState.REMOVED;
    default:
      return assertNever(t, 'node state');
  }
}

/** undefined for UNSPECIFIED or a number the contract does not define. */
export function nodeStateToText(s: NodeState): NodeStateText | undefined {
  switch (s) {
    case NodeState.JOINING:
      return 'joining';
    case NodeState.ACTIVE:
      return 'active';
    case NodeState.DRAINING:
      return 'draining';
    case NodeState.REMOVED:
      return 'removed';
    default:
      return undefined;
  }
}

export function rangeStateFromText(t: RangeStateText): RangeState {
  switch (t) {
    case 'active':
      return RangeState.ACTIVE;
    case 'frozen':
      return RangeState.FROZEN;
    default:
      return assertNever(t, 'range state');
  }
}

/** undefined for UNSPECIFIED or a number the contract does not define. */
export function rangeStateToText(s: RangeState): RangeStateText | undefined {
  switch (s) {
    case RangeState.ACTIVE:
      return 'active';
    case RangeState.FROZEN:
      return 'frozen';
    default:
      return undefined;
  }
}

export function tableKindFromText(t: TableKindText): TableKind {
  switch (t) {
    case 'sharded':
      return TableKind.SHARDED;
    case 'reference':
      return TableKind.REFERENCE;
    case 'global':
      return TableKind.GLOBAL;
    default:
      return assertNever(t, 'table kind');
  }
}

export function jobStateFromText(t: JobStateText): JobState {
  switch (t) {
    case 'pending':
      return JobState.PENDING;
    case 'running':
      return JobState.RUNNING;
    case 'done':
      return JobState.DONE;
    case 'failed':
      return JobState.FAILED;
    case 'cancelled':
      return JobState.CANCELLED;
    case 'cancelling':
      return JobState.CANCELLING;
    case 'verify_failed':
      return JobState.VERIFY_FAILED;
    default:
      return assertNever(t, 'job state');
  }
}

/** undefined for UNSPECIFIED or a number the contract does not define. */
export function jobStateToText(s: JobState): JobStateText | undefined {
  switch (s) {
    case JobState.PENDING:
      return 'pending';
    case JobState.RUNNING:
      return 'running';
    case JobState.DONE:
      return 'done';
    case JobState.FAILED:
      return 'failed';
    case JobState.CANCELLED:
      return 'cancelled';
    case JobState.CANCELLING:
      return 'cancelling';
    case JobState.VERIFY_FAILED:
      return 'verify_failed';
    default:
      return undefined;
  }
}

export function decisionFromText(t: DecisionText): Decision {
  switch (t) {
    case 'commit':
      return Decision.COMMIT;
    case 'abort':
      return Decision.ABORT;
    default:
      return assertNever(t, 'decision');
  }
}

/** undefined for UNSPECIFIED or a number the contract does not define. */
export function decisionToText(d: Decision): DecisionText | undefined {
  switch (d) {
    case Decision.COMMIT:
      return 'commit';
    case Decision.ABORT:
      return 'abort';
    default:
      return undefined;
  }
}

export function replicaStateFromText(t: ReplicaStateText): ReplicaState {
  switch (t) {
    case 'catching_up':
      return ReplicaState.CATCHING_UP;
    case 'sync':
      return ReplicaState.SYNC;
    case 'fenced':
      return ReplicaState.FENCED;
    case 'rejoining':
      return ReplicaState.REJOINING;
    default:
      return assertNever(t, 'replica state');
  }
}

export function replicaStateToText(s: ReplicaState): ReplicaStateText | undefined {
  switch (s) {
    case ReplicaState.CATCHING_UP:
      return 'catching_up';
    case ReplicaState.SYNC:
      return 'sync';
    case ReplicaState.FENCED:
      return 'fenced';
    case ReplicaState.REJOINING:
      return 'rejoining';
    default:
      return undefined;
  }
}

export function haModeFromText(t: HaModeText): HaMode {
  switch (t) {
    case 'native':
      return HaMode.NATIVE;
    case 'patroni':
      return HaMode.PATRONI;
    case 'cnpg':
      return HaMode.CNPG;
    default:
      return assertNever(t, 'HA mode');
  }
}

/** undefined for a number the contract does not define; UNSPECIFIED is native. */
export function haModeToText(m: HaMode): HaModeText | undefined {
  switch (m) {
    case HaMode.UNSPECIFIED:
    case HaMode.NATIVE:
      return 'native';
    case HaMode.PATRONI:
      return 'patroni';
    case HaMode.CNPG:
      return 'cnpg';
    default:
      return undefined;
  }
}
