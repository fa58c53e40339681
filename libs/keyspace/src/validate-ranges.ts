// The invariant of DESIGN.md section 2: a keyspace's ranges cover every int8 hash exactly once.
// Checked whole, so a catalog that breaks it is refused with its first problem named.
import { CatalogInvalidError } from './errors.js';
import { HASH_MAX, HASH_MIN, type HashRange } from './hash-space.js';

/** A copy of `ranges` ordered by lo. */
export function sortedByLo<R extends HashRange>(ranges: readonly R[]): R[] {
  return [...ranges].sort((x, y) => (x.lo < y.lo ? -1 : x.lo > y.lo ? 1 : 0));
}

function show(r: HashRange): string {
  return `[${r.lo}, ${r.hi}]`;
}

/**
 * Throws CatalogInvalidError unless `ranges` (in any order) cover [HASH_MIN, HASH_MAX] exactly
 * once; the message names the keyspace and the first problem found.
 */
export function validateRanges(keyspace: string, ranges: readonly HashRange[]): void {
  const fail = (problem: string): never => {
    throw new CatalogInvalidError(`keyspace "${keyspace}" ${problem}`);
  };
  if (ranges.length === 0) fail('has no ranges');
  const sorted = sortedByLo(ranges);
  for (const r of sorted) {
    if (r.lo > r.hi) fail(`has a range ${show(r)} whose lo is above its hi`);
  }
  const first = sorted[0]!;
  if (first.lo !== HASH_MIN) {
    fail(`does not start at HASH_MIN (${HASH_MIN}): its first range is ${show(first)}`);
  }
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const next = sorted[i]!;
    if (next.lo <= prev.hi) {
      fail(`has overlapping ranges at ${next.lo}: ${show(prev)} and ${show(next)}`);
    }
    if (next.lo > prev.hi + 1n) {
      fail(
        `has a gap between ${prev.hi} and ${next.lo}: hashes ${prev.hi + 1n} to ${next.lo - 1n} have no range`,
      );
    }
  }
  const last = sorted[sorted.length - 1]!;
  if (last.hi !== HASH_MAX) {
    fail(`does not end at HASH_MAX (${HASH_MAX}): its last range is ${show(last)}`);
  }
}
