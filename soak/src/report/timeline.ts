// Throughput per second by outcome and latency percentiles per 10 s, collected as operations
// complete (no second pass over the history).
import type { OpRecord } from '../workload/runner.js';

export interface SecondCounts {
  s: number;
  ok: number;
  fail: number;
  info: number;
}

export interface LatencyBucket {
  /** Start of the bucket, seconds since the history began. */
  s: number;
  n: number;
  p50Ms: number;
  p99Ms: number;
}

export const LATENCY_BUCKET_S = 10;

export class Timeline {
  readonly #seconds: SecondCounts[] = [];
  readonly #latencies: number[][] = [];
  readonly byKind = new Map<string, { ok: number; fail: number; info: number }>();

  record(op: OpRecord): void {
    const s = Math.floor(op.completeNs / 1e9);
    while (this.#seconds.length <= s)
      this.#seconds.push({ s: this.#seconds.length, ok: 0, fail: 0, info: 0 });
    this.#seconds[s]![op.outcome]++;
    const k = this.byKind.get(op.kind) ?? { ok: 0, fail: 0, info: 0 };
    k[op.outcome]++;
    this.byKind.set(op.kind, k);
    if (op.outcome !== 'ok') return;
    const b = Math.floor(s / LATENCY_BUCKET_S);
    while (this.#latencies.length <= b) this.#latencies.push([]);
    this.#latencies[b]!.push((op.completeNs - op.invokeNs) / 1e6);
  }

  seconds(): SecondCounts[] {
    return this.#seconds;
  }

  latency(): LatencyBucket[] {
    return this.#latencies.map((l, i) => {
      const sorted = [...l].sort((a, b) => a - b);
      return {
        s: i * LATENCY_BUCKET_S,
        n: l.length,
        p50Ms: quantile(sorted, 0.5),
        p99Ms: quantile(sorted, 0.99),
      };
    });
  }
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round(sorted[i]! * 100) / 100;
}
