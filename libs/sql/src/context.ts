// What every statement handler shares: its text, and the base facts from one collector walk.
import type { Node } from 'libpg-query';
import type { Analysis, AnalysisBase } from './types.js';
import type { Collected } from './collect.js';
import { hasVolatile } from './collect.js';

export interface StatementContext {
  /** The statement's text (trimmed). */
  readonly sql: string;
  /** Its offset in the caller's input. */
  readonly location: number;
  /** Analyses an inner statement (EXPLAIN, PREPARE, COPY (query), DECLARE, CTAS) given its text. */
  readonly analyzeInner: (node: Node, sql: string, location: number) => Analysis;
}

export function baseOf(ctx: StatementContext, c: Collected): AnalysisBase {
  return {
    sql: ctx.sql,
    location: ctx.location,
    tables: c.tables,
    paramCount: c.paramCount,
    functions: c.functions,
    hasVolatileFunctions: hasVolatile(c.functions),
    hasSubqueries: c.hasSubqueries,
    hasCtes: c.hasCtes,
    hasDataModifyingCtes: c.hasDataModifyingCtes,
  };
}
