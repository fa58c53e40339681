// The fault schedule of a run, drawn from the plan's seed (docs/soak.md, "Faults"): the same
// plan, cluster shape and --seed give the same kinds, targets, parameters, durations and gaps in
// the same order, so a failing run can be replayed. Pure.
import { PlanError, type FaultEntry, type FaultsPlan } from '../plan/plan.js';
import type { Rng } from '../rng.js';
import type { ClusterShape, FaultItem } from './fault.js';
import { faultKind } from './registry.js';

export interface Schedule {
  items: FaultItem[];
  /** Kinds the plan names that this run cannot do, and why. */
  skipped: { kind: string; reason: string }[];
}

export function drawSchedule(
  faults: FaultsPlan,
  seconds: number,
  shape: ClusterShape,
  rng: Rng,
): Schedule {
  const skipped: Schedule['skipped'] = [];
  const usable = faults.kinds.filter((e) => {
    const k = faultKind(e.kind);
    if (!k) throw new PlanError(`faults.kinds names an unknown fault kind "${e.kind}"`);
    if (k.needs === 'netns' && !shape.netns) {
      skipped.push({ kind: e.kind, reason: 'needs network namespaces (this run is on loopback)' });
      return false;
    }
    if (k.needs === 'linkProxy' && !shape.linkProxy) {
      skipped.push({ kind: e.kind, reason: 'needs cluster.linkProxy' });
      return false;
    }
    if (k.needs === 'replicas' && !shape.replicas) {
      skipped.push({ kind: e.kind, reason: 'needs cluster.replicas' });
      return false;
    }
    return e.weight > 0;
  });
  const items: FaultItem[] = [];
  if (usable.length === 0) return { items, skipped };
  // Enough for the run even if every fault were as short as it can be.
  const shortest = Math.max(0.5, Math.min(...usable.map((e) => e.seconds[0])) + faults.gapS[0]);
  const max = Math.ceil((seconds - faults.firstAfterS) / shortest) + usable.length;
  let cycle: typeof usable = [];
  // The kinds the plan wants first, when this run can do them (skipped ones are reported above).
  const opening = faults.first.flatMap((k) => usable.filter((e) => e.kind === k).slice(0, 1));
  const drawn = new Map<FaultEntry, number>();
  const open = (e: FaultEntry): boolean => e.atMost === undefined || (drawn.get(e) ?? 0) < e.atMost;
  for (let id = 1; id <= max + opening.length; id++) {
    let entry;
    const left = usable.filter(open);
    if (left.length === 0) break;
    if (id <= opening.length) {
      entry = opening[id - 1]!;
    } else if (faults.everyKind) {
      cycle = cycle.filter(open);
      if (cycle.length === 0) cycle = rng.shuffle(left);
      entry = cycle.shift()!;
    } else {
      entry = left[rng.weighted(left.map((e) => e.weight))]!;
    }
    drawn.set(entry, (drawn.get(entry) ?? 0) + 1);
    const kind = faultKind(entry.kind)!;
    const { target, params } = kind.draw(rng, shape, entry);
    items.push({
      id,
      kind: kind.name,
      target,
      seconds: round(rng.between(entry.seconds[0], entry.seconds[1])),
      gapAfterS: round(rng.between(faults.gapS[0], faults.gapS[1])),
      params,
    });
  }
  return { items, skipped };
}

const round = (x: number): number => Math.round(x * 10) / 10;
