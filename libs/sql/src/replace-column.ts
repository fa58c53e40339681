// Replacing a column of one catalog relation with an expression wherever a statement reads it
// (the router reports pg_class.relchecks without Tessera's fences this way, so that it agrees with
// what pg_constraint shows through the router). A select-list entry keeps the column's name. The
// statement is rebuilt from its parse tree and checked by parsing it again.
import type { ColumnRef, Node, RangeVar, ResTarget } from 'libpg-query';
import { parseStatements } from './parser.js';
import { SqlError, SQLSTATE_FEATURE_NOT_SUPPORTED } from './errors.js';
import { clone } from './plan/nodes.js';
import { quoteIdent } from './quote.js';
import { expressionNode, rebuiltSql } from './rewrite-tree.js';

export interface ColumnTarget {
  /** The relation, in pg_catalog (found qualified or not). */
  readonly relation: string;
  readonly column: string;
  /** The expression to read instead, given the relation's name in the query (quoted). */
  readonly expression: (qualifier: string) => string;
}

class ColumnReplacer {
  changed = false;
  constructor(private readonly t: ColumnTarget) {}

  /** The names the relation goes by in the FROM list `from` (not inside its subqueries). */
  private namesIn(from: unknown, out: string[]): string[] {
    if (Array.isArray(from)) {
      for (const f of from) this.namesIn(f, out);
      return out;
    }
    if (from === null || typeof from !== 'object') return out;
    const o = from as Record<string, unknown>;
    if ('RangeVar' in o) {
      const rv = o['RangeVar'] as RangeVar;
      const schema = rv.schemaname ?? 'pg_catalog';
      if (rv.relname === this.t.relation && schema === 'pg_catalog')
        out.push(rv.alias?.aliasname ?? this.t.relation);
    } else if ('JoinExpr' in o) {
      const j = o['JoinExpr'] as { larg?: unknown; rarg?: unknown };
      this.namesIn(j.larg, out);
      this.namesIn(j.rarg, out);
    }
    return out;
  }

  /** The qualifier a column reference reads the column through, if it does. */
  private reads(ref: ColumnRef, scope: readonly string[]): string | undefined {
    const f = (ref.fields ?? []).map((x) => ('String' in x ? x.String.sval : undefined));
    if (f.length === 2 && f[1] === this.t.column && scope.includes(f[0]!)) return f[0];
    if (f.length === 1 && f[0] === this.t.column && scope.length === 1) return scope[0];
    return undefined;
  }

  node(value: unknown, scope: readonly string[]): unknown {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v) => this.node(v, scope));
    const o = value as Record<string, unknown>;
    if ('ColumnRef' in o && Object.keys(o).length === 1) {
      const q = this.reads(o['ColumnRef'] as ColumnRef, scope);
      if (q !== undefined) {
        this.changed = true;
        return expressionNode(this.t.expression(quoteIdent(q)));
      }
      return o;
    }
    if ('SelectStmt' in o) {
      // A query level: its own FROM list's names, then the enclosing levels' (correlation).
      const s = o['SelectStmt'] as Record<string, unknown>;
      this.level(s, scope);
      return o;
    }
    if ('ResTarget' in o) {
      const t = o['ResTarget'] as ResTarget;
      const v = t.val as Record<string, unknown> | undefined;
      const named =
        t.name === undefined &&
        v !== undefined &&
        'ColumnRef' in v &&
        this.reads(v['ColumnRef'] as ColumnRef, scope) !== undefined;
      for (const key of Object.keys(t))
        (t as Record<string, unknown>)[key] = this.node((t as Record<string, unknown>)[key], scope);
      if (named) t.name = this.t.column;
      return o;
    }
    for (const key of Object.keys(o)) o[key] = this.node(o[key], scope);
    return o;
  }

  level(s: Record<string, unknown>, outer: readonly string[]): void {
    const own = this.namesIn(s['fromClause'], []);
    const scope = own.length > 0 ? own : outer;
    for (const key of Object.keys(s)) s[key] = this.node(s[key], scope);
  }
}

/**
 * `sql` (one statement) reading `t.expression` wherever it reads `t.column` of pg_catalog's
 * `t.relation`; `sql` itself when it reads none. A `*` still reads the column as it is. Throws
 * SqlError 0A000 when the rebuilt text would not parse back to the same tree.
 */
export function replaceColumn(sql: string, t: ColumnTarget): string {
  const stmts = parseStatements(sql);
  if (stmts.length !== 1) return sql;
  const r = new ColumnReplacer(t);
  const tree = r.node(clone(stmts[0]!.node), []) as Node;
  if (!r.changed) return sql;
  return rebuiltSql(tree, () => {
    throw new SqlError(
      SQLSTATE_FEATURE_NOT_SUPPORTED,
      `this statement reading ${t.relation}.${t.column} could not be rewritten by the router`,
    );
  });
}
