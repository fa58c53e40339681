// planRead(sql, catalog): the one entry of multi-node read planning. Pure: the SQL text and a
// catalog seam in, a plan tree of primitives (or a refusal with a sentence) out. The router calls it
// only for a SELECT that must run on several nodes; the same leaf SQL runs on every one of them.
import type { SelectStmt } from 'libpg-query';
import type { SelectAnalysis } from '../types.js';
import type { PlanNode, PlanOptions, PlannerCatalog, ReadPlanResult } from './types.js';
import { parseStatements } from '../parser.js';
import { analyzeNode } from '../analyze.js';
import { PlanRefusal, builtinName, containsAggregate, refuse } from './nodes.js';
import { outputName } from './names.js';
import { hasNestedQueries, levelSources, queryLocality } from './colocated.js';
import { planSetOperation } from './set-operation.js';
import { checkOuterJoins, checkStatementShape, checkTables } from './scope.js';
import { planRows } from './rows.js';
import { planAggregate } from './aggregate.js';
import { overSubquery } from './outer.js';
import { TRANSACTION_TIME_PLACEHOLDER, rewriteTransactionTime } from './transaction-time.js';

function isAggregating(s: SelectStmt): boolean {
  return (
    (s.groupClause?.length ?? 0) > 0 ||
    s.havingClause !== undefined ||
    containsAggregate(s.targetList) ||
    containsAggregate(s.sortClause)
  );
}

interface PlannedSelect {
  readonly root: PlanNode;
  readonly leafSql: string;
  readonly leafParams: readonly number[];
}

/** `select count(*) [as n] from (<query>) s` and nothing else: the query and the column name. */
function countOverSubquery(s: SelectStmt): { sub: SelectStmt; name: string } | undefined {
  const [only, ...more] = s.targetList ?? [];
  const [from, ...moreFrom] = s.fromClause ?? [];
  if (only === undefined || more.length > 0 || !('ResTarget' in only)) return undefined;
  if (from === undefined || moreFrom.length > 0 || !('RangeSubselect' in from)) return undefined;
  const val = only.ResTarget.val;
  const f = val !== undefined && 'FuncCall' in val ? val.FuncCall : undefined;
  if (f === undefined || f.agg_star !== true || builtinName(f) !== 'count' || f.over !== undefined)
    return undefined;
  if (f.agg_filter !== undefined || f.agg_distinct === true) return undefined;
  const sub = from.RangeSubselect.subquery;
  if (from.RangeSubselect.lateral === true || sub === undefined || !('SelectStmt' in sub))
    return undefined;
  return onlyListAndFrom(s) ? { sub: sub.SelectStmt, name: outputName(only.ResTarget) } : undefined;
}

/** A SELECT of its target list and FROM alone: no WHERE, grouping, ordering, limit, CTE or lock. */
function onlyListAndFrom(s: SelectStmt): boolean {
  return (
    s.whereClause === undefined &&
    (s.groupClause?.length ?? 0) === 0 &&
    s.havingClause === undefined &&
    (s.sortClause?.length ?? 0) === 0 &&
    s.limitCount === undefined &&
    s.limitOffset === undefined &&
    (s.distinctClause?.length ?? 0) === 0 &&
    s.withClause === undefined &&
    (s.lockingClause?.length ?? 0) === 0 &&
    (s.windowClause?.length ?? 0) === 0
  );
}

/**
 * `select [not] exists (<query>) [as name]` and nothing else: the query (limited to one row, all
 * EXISTS needs), whether negated, and the column name.
 */
function existsOverSubquery(
  s: SelectStmt,
): { sub: SelectStmt; name: string; exists: 'exists' | 'not_exists' } | undefined {
  const [only, ...more] = s.targetList ?? [];
  if (only === undefined || more.length > 0 || !('ResTarget' in only)) return undefined;
  if (!onlyTargets(s)) return undefined;
  let val = only.ResTarget.val;
  let exists: 'exists' | 'not_exists' = 'exists';
  if (val !== undefined && 'BoolExpr' in val && val.BoolExpr.boolop === 'NOT_EXPR') {
    val = val.BoolExpr.args?.[0];
    exists = 'not_exists';
  }
  const link = val !== undefined && 'SubLink' in val ? val.SubLink : undefined;
  if (link?.subLinkType !== 'EXISTS_SUBLINK' || link.subselect === undefined) return undefined;
  if (!('SelectStmt' in link.subselect)) return undefined;
  const sub = link.subselect.SelectStmt;
  // Set operations and a LIMIT of its own keep their shape; otherwise one row is enough.
  const limited: SelectStmt =
    (sub.op ?? 'SETOP_NONE') === 'SETOP_NONE' && sub.limitCount === undefined
      ? {
          ...sub,
          limitCount: { A_Const: { ival: { ival: 1 } } },
          limitOption: 'LIMIT_OPTION_COUNT',
        }
      : sub;
  return { sub: limited, name: outputName(only.ResTarget), exists };
}

/** A SELECT of its target list alone (no FROM, no set operation, nothing else). */
function onlyTargets(s: SelectStmt): boolean {
  return (
    (s.fromClause?.length ?? 0) === 0 &&
    (s.op ?? 'SETOP_NONE') === 'SETOP_NONE' &&
    onlyListAndFrom(s)
  );
}

function isLocal(s: SelectStmt, catalog: PlannerCatalog): boolean {
  try {
    return queryLocality(s, catalog) === 'local';
  } catch (e) {
    if (e instanceof PlanRefusal) return false;
    throw e;
  }
}

/** A subquery planned as a read of its own (its rows merged at the router). */
function planInner(sub: SelectStmt, catalog: PlannerCatalog, options: PlanOptions): PlannedSelect {
  const inner = analyzeNode({ SelectStmt: sub }, '', 0);
  if (inner.kind !== 'select') refuse('only SELECT can be planned as a read across nodes');
  return planSelect(sub, inner, catalog, options);
}

function planSelect(
  s: SelectStmt,
  analysis: SelectAnalysis,
  catalog: PlannerCatalog,
  options: PlanOptions,
): PlannedSelect {
  const nested = options.colocatedSubqueries === true;
  if (nested && s.op !== undefined && s.op !== 'SETOP_NONE') {
    checkStatementShape(s, analysis, true, true);
    return planSetOperation(s, catalog);
  }
  const exists = nested ? existsOverSubquery(s) : undefined;
  if (exists !== undefined) {
    // The subquery read across nodes (one row is enough), then whether it had one.
    const inner = analyzeNode({ SelectStmt: exists.sub }, '', 0);
    if (inner.kind !== 'select') refuse('only SELECT can be planned as a read across nodes');
    const planned = planSelect(exists.sub, inner, catalog, options);
    const root = {
      kind: 'count_rows',
      input: planned.root,
      name: exists.name,
      exists: exists.exists,
    };
    return { ...planned, root: root as PlanNode };
  }
  const count = nested ? countOverSubquery(s) : undefined;
  if (count !== undefined && !isLocal(count.sub, catalog)) {
    // The subquery's rows are merged at the router (DISTINCT, GROUP BY, LIMIT...), then counted.
    const planned = planInner(count.sub, catalog, options);
    return { ...planned, root: { kind: 'count_rows', input: planned.root, name: count.name } };
  }
  const over = nested ? overSubquery(s) : undefined;
  if (over !== undefined && !isLocal(over.sub, catalog)) {
    // A view over sharded tables read as its definition: the subquery merged, then the rest.
    const planned = planInner(over.sub, catalog, options);
    return { ...planned, root: over.wrap(planned.root, catalog) };
  }
  if (nested && hasNestedQueries(s)) {
    checkStatementShape(s, analysis, true);
    const src = levelSources(s, catalog);
    if (src.shardedTables === 0 && src.localItems === 0)
      refuse('the query reads no sharded table, so it must not be answered from several nodes');
  } else {
    checkStatementShape(s, analysis);
    checkTables(analysis, catalog);
    checkOuterJoins(s, catalog);
  }
  return isAggregating(s) ? planAggregate(s, catalog, options) : planRows(s, catalog);
}

/** Every option of PlanOptions: what planRead plans when the caller runs everything it can. */
export const ALL_PLAN_FEATURES: Required<PlanOptions> = Object.freeze({
  aggregateExpressions: true,
  transactionTime: true,
  colocatedSubqueries: true,
});

/** Plans one multi-node SELECT. Syntax errors throw SqlError 42601 like analyze(). */
export function planRead(
  sql: string,
  catalog: PlannerCatalog,
  options: PlanOptions = {},
): ReadPlanResult {
  const statements = parseStatements(sql);
  const only = statements.length === 1 ? statements[0] : undefined;
  if (only === undefined)
    return { kind: 'refuse', reason: 'exactly one statement can be planned across nodes' };
  if (!('SelectStmt' in only.node))
    return { kind: 'refuse', reason: 'only SELECT can be planned as a read across nodes' };
  const s = only.node.SelectStmt;
  try {
    const analysis = analyzeNode(only.node, only.sql, only.location);
    if (analysis.kind !== 'select')
      throw new PlanRefusal('only SELECT can be planned as a read across nodes');
    let usesTransactionTime = false;
    if (options.transactionTime === true) {
      if (sql.includes(TRANSACTION_TIME_PLACEHOLDER))
        throw new PlanRefusal(`the text ${TRANSACTION_TIME_PLACEHOLDER} is reserved by the router`);
      usesTransactionTime = rewriteTransactionTime(s);
    }
    const { root, leafSql, leafParams } = planSelect(s, analysis, catalog, options);
    return {
      kind: 'plan',
      root,
      leafSql,
      leafParams,
      textCollationIsBytewise: catalog.textCollationIsBytewise,
      usesTransactionTime,
    };
  } catch (e) {
    if (e instanceof PlanRefusal) return { kind: 'refuse', reason: e.message };
    throw e;
  }
}
