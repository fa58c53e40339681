// Replacing calls of some functions in a statement with expressions the caller writes (the router
// answers the size functions of sharded tables this way: a call becomes a CASE over the values it
// measured on every node). Calls are found in the parse tree, and the statement is rebuilt from
// it and checked by parsing it again; a statement that cannot be is refused, never sent changed.
import type { FuncCall, Node } from 'libpg-query';
import { parseStatements } from './parser.js';
import { SqlError, SQLSTATE_FEATURE_NOT_SUPPORTED } from './errors.js';
import { deparseNode } from './plan/deparse.js';
import { clone } from './plan/nodes.js';
import { expressionNode, rebuiltSql } from './rewrite-tree.js';

/**
 * For a call of `name` (unqualified or in pg_catalog) with these arguments (as SQL text), the
 * expression to put in its place, or undefined to keep the call.
 */
export type CallReplacement = (name: string, args: readonly string[]) => string | undefined;

function refuseCalls(what: string): never {
  throw new SqlError(
    SQLSTATE_FEATURE_NOT_SUPPORTED,
    `${what} could not be rewritten by the router`,
  );
}

function callName(f: FuncCall): string | undefined {
  const parts = (f.funcname ?? []).map((n) => ('String' in n ? n.String.sval : undefined));
  if (parts.length === 1) return parts[0];
  return parts.length === 2 && parts[0] === 'pg_catalog' ? parts[1] : undefined;
}

class Replacer {
  changed = false;
  constructor(
    private readonly names: ReadonlySet<string>,
    private readonly replacementOf: CallReplacement,
  ) {}

  /** The node to put where `node` is: a replacement, or `node` with its insides visited. */
  node(node: unknown): unknown {
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((n) => this.node(n));
    const o = node as Record<string, unknown>;
    const call = o['FuncCall'] as FuncCall | undefined;
    if (call !== undefined && Object.keys(o).length === 1) {
      const name = callName(call);
      if (name !== undefined && this.names.has(name) && call.agg_star !== true) {
        const args = (call.args ?? []).map((a) => deparseNode(a));
        const text = this.replacementOf(name, args);
        if (text !== undefined) {
          this.changed = true;
          return expressionNode(text);
        }
      }
    }
    for (const key of Object.keys(o)) o[key] = this.node(o[key]);
    return o;
  }
}

/**
 * `sql` (one statement) with the calls of `names` that `replacementOf` answers replaced; `sql`
 * itself when it answers none. Throws SqlError 0A000 when the rebuilt text would not parse back
 * to the same tree.
 */
export function replaceCalls(
  sql: string,
  names: ReadonlySet<string>,
  replacementOf: CallReplacement,
): string {
  const stmts = parseStatements(sql);
  if (stmts.length !== 1) refuseCalls('a string of several statements');
  const r = new Replacer(names, replacementOf);
  const tree = r.node(clone(stmts[0]!.node)) as Node;
  if (!r.changed) return sql;
  return rebuiltSql(tree, () => refuseCalls('this statement'));
}
