// Ratios to a reference target measured in the same round and workload: machine noise that hits a
// whole round (another process, thermal state) cancels out, which medians of raw TPS cannot do.
import { median } from '../harness/stats.js';
import type { Measurement, PairedComparison } from './model.js';

/**
 * Sets `values[key] = values[of] / the reference's values[of]` (default: TPS) on every measurement
 * whose round has the reference.
 */
export function addRatios(ms: Measurement[], reference: string, key: string, of = 'tps'): void {
  const ref = new Map<string, number>();
  for (const m of ms) {
    const v = m.values[of];
    if (m.target === reference && m.error === undefined && typeof v === 'number' && v > 0) {
      ref.set(`${m.round}\u0000${m.group}`, v);
    }
  }
  for (const m of ms) {
    const r = ref.get(`${m.round}\u0000${m.group}`);
    const v = m.values[of];
    m.values[key] = r !== undefined && typeof v === 'number' ? v / r : null;
  }
}

/**
 * Sets `values[key]` to a value over the same target's in another workload of the same round
 * (`referenceGroup` maps a workload to it; default: TPS), e.g. the router's CPU per simple-protocol
 * statement over its CPU per prepared statement at the same clients; null where there is none.
 */
export function addGroupRatios(
  ms: Measurement[],
  referenceGroup: ReadonlyMap<string, string>,
  key: string,
  of = 'tps',
): void {
  const ref = new Map<string, number>();
  for (const m of ms) {
    const v = m.values[of];
    if (m.error === undefined && typeof v === 'number' && v > 0) {
      ref.set(`${m.round}\u0000${m.group}\u0000${m.target}`, v);
    }
  }
  for (const m of ms) {
    const group = referenceGroup.get(m.group);
    const r =
      group === undefined ? undefined : ref.get(`${m.round}\u0000${group}\u0000${m.target}`);
    const v = m.values[of];
    m.values[key] = r !== undefined && typeof v === 'number' ? v / r : null;
  }
}

/**
 * `target` against `reference`, workload by workload, round by round: both values, their ratio
 * within the round, and the median of those ratios. Workloads in the order first measured.
 */
export function pairedComparison(
  ms: readonly Measurement[],
  target: string,
  reference: string,
  of = 'tps',
): PairedComparison {
  const rounds = Math.max(0, ...ms.map((m) => m.round));
  const groups = [...new Set(ms.map((m) => m.group))];
  const value = (group: string, name: string, round: number): number | null => {
    const m = ms.find((x) => x.group === group && x.target === name && x.round === round);
    const v = m?.error === undefined ? m?.values[of] : undefined;
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  const rows = groups.map((group) => {
    const each = Array.from({ length: rounds }, (_, i) => i + 1);
    const values = each.map((r) => value(group, target, r));
    const referenceValues = each.map((r) => value(group, reference, r));
    const ratios = values.map((v, i) => {
      const r = referenceValues[i];
      return v !== null && r !== null && r !== undefined && r > 0 ? v / r : null;
    });
    return { group, values, referenceValues, ratios, median: median(ratios) };
  });
  return { target, reference, metric: of, rows };
}
