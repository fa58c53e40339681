// Every query level of a statement (the statement itself, its CTE bodies, subqueries in FROM and in
// expressions) analysed as a SELECT of its own: the router needs each level's own pins to see that a
// CTE or subquery is pinned to the same node as the outer query (`with x as (... where tenant_id =
// 64) select ...`), which the statement's analysis (pins of the top level only) cannot show.
import type { Node } from 'libpg-query';
import type { SelectAnalysis } from './types.js';
import { parseStatements } from './parser.js';
import { analyzeNode } from './analyze.js';
import { deepFreeze } from './freeze.js';

function isSelectBody(key: string, parent: Record<string, unknown>): boolean {
  // Set-operation branches (larg / rarg) are SelectStmt bodies without the wrapper.
  if (key === 'SelectStmt') return true;
  return (key === 'larg' || key === 'rarg') && typeof parent['op'] === 'string';
}

function collectLevels(value: unknown, out: Node[]): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) collectLevels(v, out);
    return;
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    const v = o[key];
    if (isSelectBody(key, o) && v !== null && typeof v === 'object') {
      const s = v as { op?: string };
      // A set operation's branches are levels; the operation node itself has no FROM.
      if (s.op === undefined || s.op === 'SETOP_NONE') out.push({ SelectStmt: v } as Node);
    }
    collectLevels(v, out);
  }
}

/**
 * The SELECT levels of the one statement in `sql`, outermost first; each level's `tables` with
 * scope `top` are the relations of its own FROM, and `where.pins` its own key pins. Statements
 * other than SELECT give the levels inside them (INSERT ... SELECT, UPDATE ... WHERE IN (...)).
 */
export function queryLevels(sql: string): readonly SelectAnalysis[] {
  const [only] = parseStatements(sql);
  if (only === undefined) return [];
  const nodes: Node[] = [];
  collectLevels({ root: only.node }, nodes);
  const out: SelectAnalysis[] = [];
  for (const n of nodes) {
    const a = analyzeNode(n, only.sql, only.location);
    if (a.kind === 'select') out.push(a);
  }
  return deepFreeze(out);
}
