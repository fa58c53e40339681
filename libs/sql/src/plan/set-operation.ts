// UNION ALL and UNION across nodes (PlanOptions.colocatedSubqueries): every branch is node-local,
// so each node runs the whole statement and the router concatenates (UNION ALL) or also removes
// cross-node duplicates (UNION), k-way merging when the statement has an ORDER BY and applying its
// LIMIT / OFFSET. INTERSECT and EXCEPT need every node's rows at once and are refused.
import type { ResTarget, SelectStmt } from 'libpg-query';
import type { PlanNode, PlannerCatalog, Scatter, SortKey } from './types.js';
import { clone, refuse } from './nodes.js';
import { isStar, matchTarget, positionOf, sortItems } from './order.js';
import { planLimit } from './limit.js';
import { deparseStatement } from './deparse.js';
import { renumberParams } from './params.js';
import { queryLocality } from './colocated.js';
import type { Locality } from './colocated.js';

export interface SetOperationPlan {
  readonly root: PlanNode;
  readonly leafSql: string;
  readonly leafParams: readonly number[];
}

/** The branches' localities; refuses nested operations that the router could not complete. */
function branches(s: SelectStmt, catalog: PlannerCatalog, distinct: boolean): Locality[] {
  if (s.op === undefined || s.op === 'SETOP_NONE') {
    // A branch is its own query: classify it as a subquery would be.
    return [queryLocality(s, catalog)];
  }
  if (s.op !== 'SETOP_UNION') refuse('INTERSECT and EXCEPT are not supported across nodes');
  // Under UNION ALL, a nested UNION would have removed duplicates only within each node.
  if (!distinct && s.all !== true)
    refuse('a UNION inside a UNION ALL is not supported across nodes');
  if (s.withClause !== undefined || s.sortClause !== undefined || s.limitCount !== undefined)
    refuse('WITH, ORDER BY or LIMIT inside a set operation is not supported across nodes');
  return [s.larg, s.rarg].flatMap((b) =>
    b === undefined
      ? refuse('a UNION branch could not be understood')
      : branches(b, catalog, distinct),
  );
}

function leftmost(s: SelectStmt): SelectStmt {
  let b = s;
  while (b.op !== undefined && b.op !== 'SETOP_NONE' && b.larg !== undefined) b = b.larg;
  return b;
}

export function planSetOperation(s: SelectStmt, catalog: PlannerCatalog): SetOperationPlan {
  if (s.op !== 'SETOP_UNION') refuse('INTERSECT and EXCEPT are not supported across nodes');
  const distinct = s.all !== true;
  if (s.withClause !== undefined) refuse('WITH together with UNION is not supported across nodes');
  const kinds = branches(
    {
      ...s,
      sortClause: undefined,
      limitCount: undefined,
      limitOffset: undefined,
      withClause: undefined,
    },
    catalog,
    distinct,
  );
  // A branch over reference tables alone comes back from every node: only UNION removes that.
  if (!distinct && kinds.some((k) => k === 'none'))
    refuse('a UNION ALL branch that reads no sharded table would come from every node');
  if (kinds.every((k) => k === 'none'))
    refuse('the query reads no sharded table, so it must not be answered from several nodes');

  const targets: ResTarget[] = (leftmost(s).targetList ?? []).flatMap((n) =>
    'ResTarget' in n ? [n.ResTarget] : [],
  );
  const hasStar = targets.some(isStar);
  const keys: SortKey[] = sortItems(s.sortClause, catalog).map((item) => {
    if (hasStar) refuse('ORDER BY of a UNION with * is not supported across nodes');
    const position = positionOf(item.expr);
    const column = position ?? matchTarget(item.expr, targets);
    if (column === undefined || column < 0 || column >= targets.length)
      refuse('ORDER BY of a UNION must name or number an output column across nodes');
    return {
      column,
      descending: item.descending,
      nullsFirst: item.nullsFirst,
      bytewiseText: item.bytewiseText,
    };
  });

  const limit = planLimit(s);
  const leaf = clone(s);
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
    columnCount: hasStar ? undefined : targets.length,
  };
  let root: PlanNode = keys.length > 0 ? { kind: 'merge_sort', input: scatter, keys } : scatter;
  if (distinct) root = { kind: 'distinct', input: root };
  if (limit.count !== undefined || limit.offset !== undefined)
    root = { kind: 'limit', input: root, count: limit.count, offset: limit.offset };
  return { root, leafSql, leafParams: params };
}
