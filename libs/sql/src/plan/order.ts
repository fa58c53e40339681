// ORDER BY items as the merge needs them: direction, Postgres's NULLS defaults (LAST for ASC,
// FIRST for DESC), and whether text may be compared bytewise. Which column each item sorts is
// decided by the row and aggregate planners, which know the select list.
import type { Node, ResTarget, SortBy } from 'libpg-query';
import type { PlannerCatalog } from './types.js';
import { stringList } from '../ast.js';
import { refuse, sameExpr } from './nodes.js';
import { outputName } from './names.js';

export interface SortItem {
  readonly expr: Node;
  readonly descending: boolean;
  readonly nullsFirst: boolean;
  readonly bytewiseText: boolean;
}

const BYTEWISE_COLLATIONS = new Set(['C', 'POSIX', 'ucs_basic']);

export function sortItems(
  sortClause: readonly Node[] | undefined,
  catalog: PlannerCatalog,
): SortItem[] {
  const out: SortItem[] = [];
  for (const n of sortClause ?? []) {
    if (!('SortBy' in n)) refuse('an ORDER BY item could not be understood');
    const s: SortBy = n.SortBy;
    if (s.sortby_dir === 'SORTBY_USING') refuse('ORDER BY ... USING is not supported across nodes');
    if (s.node === undefined) refuse('an ORDER BY item could not be understood');
    const descending = s.sortby_dir === 'SORTBY_DESC';
    const nullsFirst =
      s.sortby_nulls === 'SORTBY_NULLS_FIRST' ||
      (s.sortby_nulls !== 'SORTBY_NULLS_LAST' && descending);
    let bytewiseText = catalog.textCollationIsBytewise;
    if ('CollateClause' in s.node) {
      const names = stringList(s.node.CollateClause.collname);
      const name = names[names.length - 1] ?? '';
      if (BYTEWISE_COLLATIONS.has(name)) bytewiseText = true;
      else if (name !== 'default')
        refuse(`ORDER BY with COLLATE "${name}" is not supported across nodes`);
    }
    out.push({ expr: s.node, descending, nullsFirst, bytewiseText });
  }
  return out;
}

/** `ORDER BY 2`: the 0-based select-list position, or undefined when the item is not a position. */
export function positionOf(expr: Node): number | undefined {
  if (!('A_Const' in expr)) return undefined;
  const c = expr.A_Const;
  if (c.ival === undefined)
    refuse('ORDER BY a constant that is not a position is not supported across nodes');
  return (c.ival.ival ?? 0) - 1;
}

/**
 * The select-list entry an ORDER BY item names, the way Postgres resolves it: a bare name matches
 * output names first (SQL-92), then any item matches an identical select-list expression.
 */
export function matchTarget(expr: Node, targets: readonly ResTarget[]): number | undefined {
  if ('ColumnRef' in expr) {
    const fields = expr.ColumnRef.fields ?? [];
    const only = fields.length === 1 ? fields[0] : undefined;
    if (only !== undefined && 'String' in only) {
      const name = only.String.sval ?? '';
      const i = targets.findIndex((t) => !isStar(t) && outputName(t) === name);
      if (i >= 0) return i;
    }
  }
  const j = targets.findIndex((t) => t.val !== undefined && !isStar(t) && sameExpr(t.val, expr));
  return j >= 0 ? j : undefined;
}

/** `*`, `t.*`, `(composite).*`: an entry whose number of columns only the nodes know. */
export function isStar(t: ResTarget): boolean {
  const v = t.val;
  if (v === undefined) return false;
  const parts =
    'ColumnRef' in v
      ? v.ColumnRef.fields
      : 'A_Indirection' in v
        ? v.A_Indirection.indirection
        : undefined;
  const last = parts?.[parts.length - 1];
  return last !== undefined && 'A_Star' in last;
}
