// The tessera_owns CHECK constraint (DESIGN.md "Fences"): SQL that is true exactly for rows
// whose key hashes into the ranges a node owns, so no one can put a row where it does not belong.
import { hashFunctionName, type KeyTypeName } from './key-type.js';
import type { HashRange } from './hash-space.js';
import { sortedByLo } from './validate-ranges.js';

/** `ranges` ordered, with touching or overlapping ones joined, so a fence tests as few as possible. */
export function mergeRanges(ranges: readonly HashRange[]): { lo: bigint; hi: bigint }[] {
  const out: { lo: bigint; hi: bigint }[] = [];
  for (const r of sortedByLo(ranges)) {
    if (r.lo > r.hi) throw new RangeError(`range [${r.lo}, ${r.hi}] has lo above hi`);
    const last = out[out.length - 1];
    if (last !== undefined && r.lo <= last.hi + 1n) {
      if (r.hi > last.hi) last.hi = r.hi;
    } else {
      out.push({ lo: r.lo, hi: r.hi });
    }
  }
  return out;
}

/** An int8 literal; quoted, because -9223372036854775808::int8 would cast before negating. */
function int8(v: bigint): string {
  return `'${v}'::int8`;
}

/**
 * The boolean expression for a node's fence on a table: the key's hash lies in one of `ranges`.
 * `keyColumnSql` is the key column as SQL (already quoted as needed). A node owning nothing
 * gets `false`. Text keys hash under COLLATE "C" so the fence hashes the bytes, as routing does,
 * whatever the column's collation.
 */
export function fenceCheckSql(
  keyColumnSql: string,
  keyType: KeyTypeName,
  seed: bigint,
  ranges: readonly HashRange[],
): string {
  const merged = mergeRanges(ranges);
  if (merged.length === 0) return 'false';
  const column = keyType === 'text' ? `${keyColumnSql} COLLATE "C"` : keyColumnSql;
  const hash = `${hashFunctionName(keyType)}(${column}, ${int8(seed)})`;
  const tests = merged.map((r) => `${hash} BETWEEN ${int8(r.lo)} AND ${int8(r.hi)}`);
  return tests.length === 1 ? tests[0]! : `(${tests.join(' OR ')})`;
}
