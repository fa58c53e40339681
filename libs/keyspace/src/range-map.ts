// Which range of a keyspace holds a hash: a binary search over the ranges' lo bounds, built
// once per catalog epoch and read by the router on every statement.
import { HASH_MAX, HASH_MIN, type HashRange } from './hash-space.js';
import { sortedByLo, validateRanges } from './validate-ranges.js';

/**
 * The ranges of one keyspace, validated to cover the hash space exactly once, so that every
 * int8 hash has exactly one range. R is any range-like value (a catalog Range, a plan's slice).
 */
export class RangeMap<R extends HashRange = HashRange> {
  readonly #ranges: readonly R[];
  // The lo bounds apart from the ranges, so the search touches one flat array.
  readonly #los: readonly bigint[];

  /** Throws CatalogInvalidError (naming `keyspace`) unless `ranges` cover the space once. */
  constructor(keyspace: string, ranges: readonly R[]) {
    validateRanges(keyspace, ranges);
    this.#ranges = Object.freeze(sortedByLo(ranges));
    this.#los = Object.freeze(this.#ranges.map((r) => r.lo));
  }

  /** The ranges, ordered by lo. */
  get ranges(): readonly R[] {
    return this.#ranges;
  }

  get size(): number {
    return this.#ranges.length;
  }

  /** The range containing `hash`, which must be a signed 64-bit value. O(log n). */
  ownerOf(hash: bigint): R {
    if (hash < HASH_MIN || hash > HASH_MAX)
      throw new RangeError(`hash ${hash} is outside the int8 range`);
    const los = this.#los;
    // The last range whose lo <= hash; the first lo is HASH_MIN, so one always exists.
    let low = 0;
    let high = los.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if (los[mid]! <= hash) low = mid;
      else high = mid - 1;
    }
    return this.#ranges[low]!;
  }
}
