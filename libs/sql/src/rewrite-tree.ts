// What the rewrites that change a statement's parse tree share (restrict, replace-calls,
// replace-column): the tree of an expression they put in, and the statement written back as SQL,
// checked by parsing it again (a statement that cannot be is refused, never sent changed).
import type { Node } from 'libpg-query';
import { parseStatements } from './parser.js';
import { deparseStatement } from './plan/deparse.js';
import { PlanRefusal } from './plan/nodes.js';

/** The tree of `sql`, an expression the router writes (never client text). */
export function expressionNode(sql: string): Node {
  const stmt = parseStatements(`SELECT ${sql}`)[0]?.node;
  const target = stmt && 'SelectStmt' in stmt ? stmt.SelectStmt.targetList?.[0] : undefined;
  const val = target !== undefined && 'ResTarget' in target ? target.ResTarget.val : undefined;
  if (val === undefined) throw new Error(`not an expression: ${sql}`);
  return val;
}

/** `tree` as SQL; `refuse()` (which throws) when the text would not parse back to the same tree. */
export function rebuiltSql(tree: Node, refuse: () => never): string {
  try {
    return deparseStatement(tree);
  } catch (e) {
    if (e instanceof PlanRefusal) refuse();
    throw e;
  }
}
