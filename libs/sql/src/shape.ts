// The top query level of a SELECT as multi-node merging sees it: set operations, DISTINCT,
// aggregates, window functions, GROUP BY/HAVING/ORDER BY, LIMIT/OFFSET, locking.
import type { Node, SelectStmt, FuncCall } from 'libpg-query';
import type { RowValue, SelectShape } from './types.js';
import { stringList } from './ast.js';
import { rowValueOf } from './values.js';
import { isAggregateSyntax } from './aggregates.js';

/** Aggregate and window calls in expressions of one query level (subqueries not entered). */
function scanLevel(value: unknown, aggregates: string[], state: { window: boolean }): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) scanLevel(v, aggregates, state);
    return;
  }
  const o = value as Record<string, unknown>;
  for (const key in o) {
    if (key === 'SubLink' || key === 'RangeSubselect' || key === 'SelectStmt') continue;
    const v = o[key];
    if (key === 'FuncCall') {
      const f = v as FuncCall;
      const names = stringList(f.funcname);
      const name = names[names.length - 1] ?? '';
      if (f.over !== undefined) state.window = true;
      else if (isAggregateSyntax(f) && !aggregates.includes(name)) aggregates.push(name);
      // Arguments of an aggregate cannot hold another aggregate of this level; windows can.
    }
    scanLevel(v, aggregates, state);
  }
}

function limitValue(node: Node | undefined): RowValue | undefined {
  if (node === undefined) return undefined;
  const v = rowValueOf(node);
  if (v.kind === 'const' && v.text === null) return undefined; // LIMIT ALL / LIMIT NULL
  return v;
}

export function selectShape(s: SelectStmt): SelectShape {
  const aggregates: string[] = [];
  const state = { window: false };
  scanLevel(s.targetList, aggregates, state);
  scanLevel(s.havingClause, aggregates, state);
  scanLevel(s.sortClause, aggregates, state);
  scanLevel(s.windowClause, aggregates, state);
  const distinct = s.distinctClause ?? [];
  const isDistinctOn = distinct.some((n) => Object.keys(n).length > 0);
  return {
    hasSetOperations: s.op !== undefined && s.op !== 'SETOP_NONE',
    hasDistinct: distinct.length > 0,
    hasDistinctOn: isDistinctOn,
    hasLocking: (s.lockingClause?.length ?? 0) > 0,
    hasWindowFunctions: state.window || (s.windowClause?.length ?? 0) > 0,
    aggregates,
    hasGroupBy: (s.groupClause?.length ?? 0) > 0,
    hasHaving: s.havingClause !== undefined,
    hasOrderBy: (s.sortClause?.length ?? 0) > 0,
    limit: limitValue(s.limitCount),
    offset: limitValue(s.limitOffset),
    isValues: (s.valuesLists?.length ?? 0) > 0,
    hasFrom: (s.fromClause?.length ?? 0) > 0,
  };
}
