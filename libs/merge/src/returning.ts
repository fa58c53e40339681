// INSERT ... RETURNING split over several nodes: each node returns the rows of its part in the
// part's order, and Postgres would have returned them in VALUES order, so the router puts them back
// in that order. Only exact when every row of a part returns one row (no ON CONFLICT, no trigger
// that skips a row): a part that returned another count is an error before the transaction commits.
import type { Row } from './types.js';
import { MergeError, internal } from './errors.js';

/** One part of a split INSERT: the VALUES row indexes it sent, and the rows its node returned. */
export interface ReturningPart {
  readonly rows: readonly number[];
  readonly returned: readonly Row[];
}

/**
 * The RETURNING rows of all parts in the order of the original VALUES list. Throws MergeError
 * 0A000 when a part returned a different number of rows than it inserted: the router must then
 * roll the transaction back instead of answering.
 */
export function mergeReturning(parts: readonly ReturningPart[]): Row[] {
  const total = parts.reduce((n, p) => n + p.rows.length, 0);
  const out: (Row | undefined)[] = new Array<Row | undefined>(total);
  for (const p of parts) {
    if (p.returned.length !== p.rows.length)
      throw new MergeError(
        '0A000',
        `INSERT ... RETURNING across nodes needs one returned row per inserted row (a part inserted ${p.rows.length} rows and returned ${p.returned.length})`,
      );
    p.rows.forEach((r, i) => {
      if (!Number.isInteger(r) || r < 0 || r >= total || out[r] !== undefined)
        throw internal(`INSERT part row index ${r} is out of range or repeated`);
      out[r] = p.returned[i];
    });
  }
  return out.map((r) => {
    if (r === undefined) throw internal('INSERT parts do not cover every VALUES row');
    return r;
  });
}
