// Leaf SQL is rebuilt from the modified parse tree with pgsql-deparser, never by string surgery,
// and checked by parsing it again: a deparser slip becomes a refusal, not a different query.
import type { Node } from 'libpg-query';
import { deparseSync } from 'pgsql-deparser';
import { parseStatements } from '../parser.js';
import { canonical, refuse } from './nodes.js';

export function deparseNode(node: Node): string {
  // The deparser's node types are structurally those of libpg-query (both generated from 18's protobuf).
  return deparseSync(node as Parameters<typeof deparseSync>[0], { pretty: false });
}

/** SQL text of one SELECT statement that, parsed again, is the same tree as `stmt`. */
export function deparseStatement(stmt: Node): string {
  const sql = deparseNode(stmt);
  const again = parseStatements(sql);
  if (again.length !== 1 || canonical(again[0]?.node, isDefault) !== canonical(stmt, isDefault))
    refuse('the per-node SQL for this query could not be rebuilt faithfully');
  return sql;
}

// Nodes the planner builds omit fields the parser fills with their defaults; nothing else may differ.
function isDefault(key: string, value: unknown): boolean {
  return (
    (key === 'funcformat' && value === 'COERCE_EXPLICIT_CALL') ||
    (key === 'typemod' && value === -1)
  );
}
