// The signed 64-bit hash space every keyspace divides into ranges, and the arithmetic on it
// that creating and splitting ranges needs.

/** The smallest hash value (int8 minimum). */
export const HASH_MIN = -(2n ** 63n);
/** The largest hash value (int8 maximum). */
export const HASH_MAX = 2n ** 63n - 1n;

/** An inclusive slice [lo, hi] of the hash space. */
export interface HashRange {
  readonly lo: bigint;
  readonly hi: bigint;
}

/**
 * n contiguous ranges covering [HASH_MIN, HASH_MAX], as equal as possible: sizes differ by at
 * most one, the larger ones first.
 */
export function evenRanges(n: number): { lo: bigint; hi: bigint }[] {
  if (!Number.isSafeInteger(n) || n < 1)
    throw new RangeError(`evenRanges needs a whole number >= 1, got ${n}`);
  const total = 2n ** 64n;
  const count = BigInt(n);
  const base = total / count;
  const larger = total % count;
  const out: { lo: bigint; hi: bigint }[] = [];
  let lo = HASH_MIN;
  for (let i = 0n; i < count; i++) {
    const size = i < larger ? base + 1n : base;
    out.push({ lo, hi: lo + size - 1n });
    lo += size;
  }
  return out;
}

/**
 * Where to split [lo, hi]: the last hash of the lower half. [lo, m] and [m + 1, hi] differ in
 * size by at most one (the lower one is larger), both non-empty whenever lo < hi; m = lo = hi
 * for a single hash, which cannot be split. midpoint(HASH_MIN, HASH_MAX) is -1.
 */
export function midpoint(lo: bigint, hi: bigint): bigint {
  if (lo > hi) throw new RangeError(`midpoint needs lo <= hi, got [${lo}, ${hi}]`);
  // hi - lo >= 0, so BigInt division here rounds down, never toward zero from below.
  return lo + (hi - lo) / 2n;
}
