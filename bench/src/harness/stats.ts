// Order statistics for latencies and for the medians of rounds.

/** The p-quantile (0..1) of an ascending array, nearest-rank; NaN when empty. */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of the finite values given (rounds that failed are left out); null when none. */
export function median(values: readonly (number | null | undefined)[]): number | null {
  const ok = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (ok.length === 0) return null;
  ok.sort((a, b) => a - b);
  const mid = ok.length >> 1;
  return ok.length % 2 === 1 ? ok[mid]! : (ok[mid - 1]! + ok[mid]!) / 2;
}

/** Round r's order of targets: the list rotated by r, so no target always runs first or last. */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const n = targets.length;
  if (n === 0) return [];
  const k = round % n;
  return [...targets.slice(k), ...targets.slice(0, k)];
}
