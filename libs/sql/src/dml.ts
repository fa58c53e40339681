// SELECT, UPDATE and DELETE: the FROM scope, pins and equalities of the top level, and the
// statement's target.
import type { SelectStmt, UpdateStmt, DeleteStmt, Node } from 'libpg-query';
import type { SelectAnalysis, UpdateAnalysis, DeleteAnalysis, WhereFacts } from './types.js';
import type { StatementContext } from './context.js';
import { baseOf } from './context.js';
import { collect } from './collect.js';
import { Scope, whereFacts } from './where.js';
import { selectShape } from './shape.js';

/** Scope of a SELECT's top level (empty for set operations: each branch is its own query). */
export function selectScope(s: SelectStmt): Scope {
  const scope = new Scope();
  if (s.op === undefined || s.op === 'SETOP_NONE')
    for (const item of s.fromClause ?? []) scope.addFromItem(item);
  return scope;
}

export function selectWhere(s: SelectStmt, scope: Scope): WhereFacts {
  return whereFacts(scope, s.op === undefined || s.op === 'SETOP_NONE' ? s.whereClause : undefined);
}

export function analyzeSelect(ctx: StatementContext, node: Node, s: SelectStmt): SelectAnalysis {
  const scope = selectScope(s);
  const c = collect(node, { top: scope.rangeVars });
  scope.resolveIndexes(c.indexOf);
  return { kind: 'select', ...baseOf(ctx, c), where: selectWhere(s, scope), shape: selectShape(s) };
}

function isCurrentOf(where: Node | undefined): boolean {
  return where !== undefined && 'CurrentOfExpr' in where;
}

export function analyzeUpdate(ctx: StatementContext, node: Node, u: UpdateStmt): UpdateAnalysis {
  const scope = new Scope();
  const target = u.relation;
  if (target !== undefined) scope.addRangeVar(target);
  for (const item of u.fromClause ?? []) scope.addFromItem(item);
  const c = collect(node, {
    top: scope.rangeVars,
    targets: new Set(target === undefined ? [] : [target]),
  });
  scope.resolveIndexes(c.indexOf);
  const setColumns: string[] = [];
  for (const t of u.targetList ?? []) {
    if (
      'ResTarget' in t &&
      t.ResTarget.name !== undefined &&
      !setColumns.includes(t.ResTarget.name)
    ) {
      setColumns.push(t.ResTarget.name);
    }
  }
  return {
    kind: 'update',
    ...baseOf(ctx, c),
    targetIndex: target === undefined ? -1 : (c.indexOf.get(target) ?? -1),
    setColumns,
    where: isCurrentOf(u.whereClause)
      ? whereFacts(scope, undefined, true)
      : whereFacts(scope, u.whereClause),
    hasFrom: (u.fromClause?.length ?? 0) > 0,
    hasReturning: (u.returningClause?.exprs?.length ?? 0) > 0,
  };
}

export function analyzeDelete(ctx: StatementContext, node: Node, d: DeleteStmt): DeleteAnalysis {
  const scope = new Scope();
  const target = d.relation;
  if (target !== undefined) scope.addRangeVar(target);
  for (const item of d.usingClause ?? []) scope.addFromItem(item);
  const c = collect(node, {
    top: scope.rangeVars,
    targets: new Set(target === undefined ? [] : [target]),
  });
  scope.resolveIndexes(c.indexOf);
  return {
    kind: 'delete',
    ...baseOf(ctx, c),
    targetIndex: target === undefined ? -1 : (c.indexOf.get(target) ?? -1),
    where: isCurrentOf(d.whereClause)
      ? whereFacts(scope, undefined, true)
      : whereFacts(scope, d.whereClause),
    hasUsing: (d.usingClause?.length ?? 0) > 0,
    hasReturning: (d.returningClause?.exprs?.length ?? 0) > 0,
  };
}
