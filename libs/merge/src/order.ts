// Row comparison for ORDER BY keys: per-key type operations chosen from the field types, NULLs
// placed per NULLS FIRST / LAST, DESC inverting only the non-null comparison (as Postgres does).
import type { SortKey } from '@tessera/sql';
import type { FieldDescription, Row } from './types.js';
import { typeOps } from './compare.js';
import type { TypeOps } from './compare.js';
import { internal } from './errors.js';

export interface RowComparator {
  decode(row: Row): unknown[];
  compare(a: readonly unknown[], b: readonly unknown[]): number;
}

/** A plan column index (negative counts from the end) as an absolute index. */
export function resolveColumn(column: number, width: number): number {
  const i = column >= 0 ? column : width + column;
  if (i < 0 || i >= width)
    throw internal(`plan column ${column} outside a row of ${width} columns`);
  return i;
}

export function rowComparator(
  fields: readonly FieldDescription[],
  keys: readonly SortKey[],
): RowComparator {
  const columns = keys.map((k) => resolveColumn(k.column, fields.length));
  const ops: TypeOps[] = keys.map((k, i) => {
    const f = fields[columns[i] ?? 0];
    return typeOps(f?.typeOid ?? 0, 'order', k.bytewiseText, f?.format);
  });
  return {
    decode(row) {
      return columns.map((c, i) => {
        const v = row[c];
        return v === null || v === undefined ? null : (ops[i] as TypeOps).decode(v);
      });
    },
    compare(a, b) {
      for (let i = 0; i < keys.length; i++) {
        const x = a[i] ?? null;
        const y = b[i] ?? null;
        const key = keys[i] as SortKey;
        if (x === null || y === null) {
          if (x === null && y === null) continue;
          const nullFirst = x === null ? -1 : 1;
          return key.nullsFirst ? nullFirst : -nullFirst;
        }
        const c = (ops[i] as TypeOps).compare(x, y);
        if (c !== 0) return key.descending ? -c : c;
      }
      return 0;
    },
  };
}
