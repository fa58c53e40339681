// What a fault kind is (docs/soak.md, "Adding a fault kind"): a pure draw of its target and
// parameters from the seeded stream, what it affects (for recovery times), and the I/O that
// injects and heals it. One module per kind under faults/, one entry in registry.ts.
import type { Cluster } from '../cluster/cluster.js';
import type { FaultEntry } from '../plan/plan.js';
import type { Rng } from '../rng.js';

export interface ClusterShape {
  nodes: { name: string; role: 'home' | 'data' }[];
  coordinators: string[];
  routers: string[];
  netns: boolean;
  linkProxy: boolean;
  /** Every node has a streaming replica (and every instance an agent). */
  replicas: boolean;
}

/** One scheduled fault. */
export interface FaultItem {
  id: number;
  kind: string;
  target: string;
  /** How long it lasts (a process stays down, a partition holds, ...). */
  seconds: number;
  /** Quiet time after its heal, before the next fault. */
  gapAfterS: number;
  params: Record<string, unknown>;
}

/** Which writes show recovery: on these nodes, through these routers, or any across nodes. */
export interface Affects {
  nodes?: string[];
  via?: string[];
  crossNode?: boolean;
}

export interface FaultContext {
  cluster: Cluster;
  log(line: string): void;
  /** Also into the history, as a nemesis event of this fault. */
  note(phase: string, value: Record<string, unknown>): void;
}

export interface FaultKind {
  name: string;
  summary: string;
  /** What the machine or plan must provide; the scheduler skips the kind otherwise. */
  needs?: 'netns' | 'linkProxy' | 'replicas';
  /** inject() itself lasts the fault's `seconds` (the nemesis does not wait again before heal). */
  selfTimed?: boolean;
  /** Pure: the target and parameters of one occurrence. */
  draw(
    rng: Rng,
    shape: ClusterShape,
    entry: FaultEntry,
  ): { target: string; params: Record<string, unknown> };
  affects(item: FaultItem, shape: ClusterShape): Affects;
  /**
   * Waits, before the fault starts (and its recovery clock with it), for what it needs: a node
   * that can fail over, for a failover. A failure is logged and the fault goes on.
   */
  prepare?(ctx: FaultContext, item: FaultItem): Promise<void>;
  /** Makes the fault happen; resolves once it is in effect, with details for the history. */
  inject(ctx: FaultContext, item: FaultItem): Promise<Record<string, unknown>>;
  /** Undoes it (idempotent); resolves once the target serves again, with details. */
  heal(ctx: FaultContext, item: FaultItem): Promise<Record<string, unknown>>;
}

/**
 * What a fault on a node affects: writes on it; for the home node, which owns no ranges but
 * holds the catalog (the coordinators' decision log), every write across nodes.
 */
export function nodeAffects(item: FaultItem, shape: ClusterShape): Affects {
  const home = shape.nodes.find((n) => n.role === 'home')?.name;
  return item.target === home ? { crossNode: true } : { nodes: [item.target] };
}

/** `params.targets` from the plan when given (names), else every candidate. */
export function candidates(entry: FaultEntry, all: readonly string[]): string[] {
  const t = entry.params.targets;
  if (Array.isArray(t) && t.length > 0) {
    const wanted = t.map(String).filter((x) => all.includes(x));
    if (wanted.length > 0) return wanted;
  }
  return [...all];
}

/** A number parameter drawn from `[lo, hi]` in the plan, or the default range. */
export function drawRange(
  rng: Rng,
  entry: FaultEntry,
  name: string,
  fallback: [number, number],
): number {
  const v = entry.params[name];
  const [lo, hi] =
    Array.isArray(v) && v.length === 2
      ? [Number(v[0]), Number(v[1])]
      : typeof v === 'number'
        ? [v, v]
        : fallback;
  return Math.round(rng.between(lo, hi) * 1000) / 1000;
}
