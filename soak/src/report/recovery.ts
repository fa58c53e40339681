// Recovery times (the definition): from a fault's start to the first successful write
// on what it affected (the nodes it hit, the router it killed, any write across nodes for the
// coordinator), invoked after the fault began; and from its heal to the first such write
// invoked after the heal.
import type { Affects } from '../faults/fault.js';
import type { OpRecord } from '../workload/runner.js';

export interface Recovery {
  id: number;
  /** Seconds from the fault's start to the completion of the first affected ok write. */
  recoveryS?: number;
  /** Seconds from the heal to the completion of the first affected ok write invoked after it. */
  afterHealS?: number;
}

interface Open {
  id: number;
  affects: Affects;
  startNs: number;
  endNs?: number;
  r: Recovery;
}

/** Every condition the fault names must hold (a 2PC kill point: through its router and across nodes). */
export function affected(a: Affects, op: Pick<OpRecord, 'nodes' | 'via'>): boolean {
  if (a.nodes && !op.nodes.some((n) => a.nodes!.includes(n))) return false;
  if (a.via && !a.via.includes(op.via)) return false;
  if (a.crossNode && op.nodes.length < 2) return false;
  return a.nodes !== undefined || a.via !== undefined || a.crossNode === true;
}

export class RecoveryTracker {
  readonly #open: Open[] = [];
  readonly results = new Map<number, Recovery>();

  start(id: number, affects: Affects, startNs: number): void {
    const r: Recovery = { id };
    this.results.set(id, r);
    this.#open.push({ id, affects, startNs, r });
  }

  end(id: number, endNs: number): void {
    const o = this.#open.find((x) => x.id === id);
    if (o) o.endNs = endNs;
  }

  record(op: OpRecord): void {
    if (op.outcome !== 'ok' || !op.writes) return;
    for (let i = this.#open.length - 1; i >= 0; i--) {
      const o = this.#open[i]!;
      if (!affected(o.affects, op)) continue;
      if (o.r.recoveryS === undefined && op.invokeNs >= o.startNs)
        o.r.recoveryS = round((op.completeNs - o.startNs) / 1e9);
      if (o.endNs !== undefined && o.r.afterHealS === undefined && op.invokeNs >= o.endNs)
        o.r.afterHealS = round((op.completeNs - o.endNs) / 1e9);
      if (o.r.recoveryS !== undefined && o.r.afterHealS !== undefined) this.#open.splice(i, 1);
    }
  }
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
