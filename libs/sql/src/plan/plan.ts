// planRead(sql, catalog): the one entry of multi-node read planning. Pure: the SQL text and a
// catalog seam in, a plan tree of primitives (or a refusal with a sentence) out. The router calls it
// only for a SELECT that must run on several nodes; the same leaf SQL runs on every one of them.
import type { SelectStmt } from 'libpg-query';
import type { PlanOptions, PlannerCatalog, ReadPlanResult } from './types.js';
import { parseStatements } from '../parser.js';
import { analyzeNode } from '../analyze.js';
import { PlanRefusal, containsAggregate } from './nodes.js';
import { checkOuterJoins, checkStatementShape, checkTables } from './scope.js';
import { planRows } from './rows.js';
import { planAggregate } from './aggregate.js';
import { TRANSACTION_TIME_PLACEHOLDER, rewriteTransactionTime } from './transaction-time.js';

function isAggregating(s: SelectStmt): boolean {
  return (
    (s.groupClause?.length ?? 0) > 0 ||
    s.havingClause !== undefined ||
    containsAggregate(s.targetList) ||
    containsAggregate(s.sortClause)
  );
}

/** Every option of PlanOptions: what planRead plans when the caller runs everything it can. */
export const ALL_PLAN_FEATURES: Required<PlanOptions> = Object.freeze({
  aggregateExpressions: true,
  transactionTime: true,
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
    checkStatementShape(s, analysis);
    checkTables(analysis, catalog);
    checkOuterJoins(s, catalog);
    const { root, leafSql, leafParams } = isAggregating(s)
      ? planAggregate(s, catalog, options)
      : planRows(s, catalog);
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
