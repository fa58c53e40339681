// Ratios to a reference target measured in the same round and workload: machine noise that hits a
// whole round (another process, thermal state) cancels out, which medians of raw TPS cannot do.
import type { Measurement } from './model.js';

/** Sets `values[key] = tps / reference's tps` on every measurement whose round has the reference. */
export function addRatios(ms: Measurement[], reference: string, key: string): void {
  const ref = new Map<string, number>();
  for (const m of ms) {
    const tps = m.values['tps'];
    if (m.target === reference && m.error === undefined && typeof tps === 'number' && tps > 0) {
      ref.set(`${m.round}\u0000${m.group}`, tps);
    }
  }
  for (const m of ms) {
    const r = ref.get(`${m.round}\u0000${m.group}`);
    const tps = m.values['tps'];
    m.values[key] = r !== undefined && typeof tps === 'number' ? tps / r : null;
  }
}
