// Splitting a multi-row INSERT: the same statement with only some VALUES rows, cut from the
// original text by span so everything else (WITH, column list, ON CONFLICT, RETURNING) is exact.
import type { InsertAnalysis } from './types.js';
import { SqlError, SQLSTATE_FEATURE_NOT_SUPPORTED } from './errors.js';

function checkRows(
  a: InsertAnalysis,
  rowIndexes: readonly number[],
): NonNullable<InsertAnalysis['rowSpans']> {
  const spans = a.rowSpans;
  if (a.source !== 'values' || spans === undefined || a.valuesSpan === undefined) {
    throw new SqlError(
      SQLSTATE_FEATURE_NOT_SUPPORTED,
      'INSERT cannot be split by row: it has no plain VALUES list',
    );
  }
  if (rowIndexes.length === 0) throw new RangeError('rebuildInsert: at least one row is needed');
  for (const i of rowIndexes) {
    if (!Number.isInteger(i) || i < 0 || i >= spans.length) {
      throw new RangeError(`rebuildInsert: row ${i} out of range (0..${spans.length - 1})`);
    }
  }
  return spans;
}

/** The INSERT with only the VALUES rows `rowIndexes` (in that order); `$n` numbering unchanged. */
export function rebuildInsert(a: InsertAnalysis, rowIndexes: readonly number[]): string {
  const spans = checkRows(a, rowIndexes);
  const all = a.valuesSpan as NonNullable<InsertAnalysis['valuesSpan']>;
  const rows = rowIndexes.map((i) => {
    const s = spans[i] as NonNullable<(typeof spans)[number]>;
    return a.sql.slice(s.start, s.end);
  });
  return a.sql.slice(0, all.start) + rows.join(', ') + a.sql.slice(all.end);
}

export interface RebuiltInsert {
  readonly sql: string;
  /** `paramIndexes[k]` is the 0-based index, in the original parameters, of the new `$(k+1)`. */
  readonly paramIndexes: readonly number[];
}

/**
 * Like rebuildInsert, but renumbers parameters densely in order of first appearance, so the new
 * statement has no unreferenced `$n` (whose type Postgres could not infer).
 */
export function rebuildInsertRenumbered(
  a: InsertAnalysis,
  rowIndexes: readonly number[],
): RebuiltInsert {
  const spans = checkRows(a, rowIndexes);
  const all = a.valuesSpan as NonNullable<InsertAnalysis['valuesSpan']>;
  const params = a.paramSpans ?? [];
  const paramIndexes: number[] = [];
  const renumber = new Map<number, number>();
  const copy = (start: number, end: number): string => {
    let out = '';
    let at = start;
    for (const p of params) {
      if (p.start < start || p.end > end) continue;
      let n = renumber.get(p.index);
      if (n === undefined) {
        n = paramIndexes.length;
        paramIndexes.push(p.index);
        renumber.set(p.index, n);
      }
      out += a.sql.slice(at, p.start) + '$' + String(n + 1);
      at = p.end;
    }
    return out + a.sql.slice(at, end);
  };
  let sql = copy(0, all.start);
  sql += rowIndexes
    .map((i) => {
      const s = spans[i] as NonNullable<(typeof spans)[number]>;
      return copy(s.start, s.end);
    })
    .join(', ');
  sql += copy(all.end, a.sql.length);
  return { sql, paramIndexes };
}
