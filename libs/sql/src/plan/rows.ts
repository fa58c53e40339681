// Plans a SELECT without aggregation: every node runs the query (with LIMIT count + offset, and
// sort keys missing from the select list appended as hidden columns); the router concatenates or
// k-way merges, removes cross-node duplicates for DISTINCT, applies the limit, drops hidden columns.
import type { Node, ResTarget, SelectStmt } from 'libpg-query';
import type { PlanNode, PlannerCatalog, Scatter, SortKey } from './types.js';
import { clone, containsAggregate, refuse, sameExpr } from './nodes.js';
import { isStar, matchTarget, positionOf, sortItems } from './order.js';
import { planLimit } from './limit.js';
import { deparseStatement } from './deparse.js';
import { renumberParams } from './params.js';

type KeyPlace = { readonly target: number } | { readonly hidden: number };

export interface RowsPlan {
  readonly root: PlanNode;
  readonly leafSql: string;
  readonly leafParams: readonly number[];
}

export function planRows(s: SelectStmt, catalog: PlannerCatalog): RowsPlan {
  const targets: ResTarget[] = [];
  for (const n of s.targetList ?? []) {
    if (!('ResTarget' in n)) refuse('a select-list item could not be understood');
    targets.push(n.ResTarget);
  }
  const stars = targets.map(isStar);
  const starBefore = (i: number) => stars.slice(0, i).some(Boolean);
  const starAfter = (i: number) => stars.slice(i + 1).some(Boolean);
  const hasStar = stars.some(Boolean);
  const isDistinct = (s.distinctClause?.length ?? 0) > 0;

  const hidden: Node[] = [];
  const places: KeyPlace[] = [];
  const items = sortItems(s.sortClause, catalog);
  for (const item of items) {
    if (containsAggregate(item.expr))
      refuse('ORDER BY an aggregate needs GROUP BY or aggregates in the select list');
    let target: number | undefined;
    const position = positionOf(item.expr);
    if (position !== undefined) {
      // Positions count the columns a `*` expands to, which only the catalog of the nodes knows.
      if (hasStar) refuse('ORDER BY position together with * is not supported across nodes');
      if (position < 0 || position >= targets.length)
        refuse(`ORDER BY position ${position + 1} is not in select list`);
      target = position;
    } else target = matchTarget(item.expr, targets);
    if (target !== undefined && (!starBefore(target) || !starAfter(target))) {
      places.push({ target });
      continue;
    }
    if (isDistinct)
      refuse(
        'for SELECT DISTINCT across nodes, ORDER BY expressions must appear in the select list',
      );
    let h = hidden.findIndex((e) => sameExpr(e, item.expr));
    if (h < 0) h = hidden.push(item.expr) - 1;
    places.push({ hidden: h });
  }

  const keys: SortKey[] = items.map((item, i) => {
    const place = places[i] ?? refuse('internal: ORDER BY item without a column');
    let column: number;
    if ('hidden' in place)
      column = hasStar ? place.hidden - hidden.length : targets.length + place.hidden;
    else if (!starBefore(place.target)) column = place.target;
    else column = place.target - targets.length - hidden.length;
    return {
      column,
      descending: item.descending,
      nullsFirst: item.nullsFirst,
      bytewiseText: item.bytewiseText,
    };
  });

  const limit = planLimit(s);
  const leaf = clone(s);
  leaf.targetList = [
    ...(leaf.targetList ?? []),
    ...hidden.map((val, i): Node => ({
      ResTarget: { name: `_tessera_sort_${i}`, val: clone(val) },
    })),
  ];
  if (!limit.leafKeepsOriginal) {
    delete leaf.limitOffset;
    if (limit.leafCount === undefined) {
      delete leaf.limitCount;
      leaf.limitOption = 'LIMIT_OPTION_DEFAULT';
    } else {
      leaf.limitCount = limit.leafCount;
      leaf.limitOption = 'LIMIT_OPTION_COUNT';
    }
  }
  const params = renumberParams(leaf);
  const leafSql = deparseStatement({ SelectStmt: leaf });
  const scatter: Scatter = {
    kind: 'scatter',
    sql: leafSql,
    params,
    columnCount: hasStar ? undefined : targets.length + hidden.length,
  };
  let root: PlanNode = keys.length > 0 ? { kind: 'merge_sort', input: scatter, keys } : scatter;
  if (isDistinct) root = { kind: 'distinct', input: root };
  if (limit.count !== undefined || limit.offset !== undefined)
    root = { kind: 'limit', input: root, count: limit.count, offset: limit.offset };
  if (hidden.length > 0) root = { kind: 'project', input: root, dropTrailing: hidden.length };
  return { root, leafSql, leafParams: params };
}
