// Ratios to a reference target measured in the same round and workload: machine noise that hits a
// whole round (another process, thermal state) cancels out, which medians of raw TPS cannot do.
import type { Measurement } from './model.js';

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
