// Reading a view as its query: every reference to a view in a FROM list becomes `(<the view's
// query>) AS <its alias, or the view's name>`, views inside views too, so a statement over a view of
// sharded tables can be routed and planned as the read it is. A view named anywhere else (an
// INSERT, UPDATE or DELETE target, TABLESAMPLE) is left as it is: the caller's routing decides.
import type { Node, RangeVar } from 'libpg-query';
import { parseStatements } from './parser.js';
import { SqlError, SQLSTATE_FEATURE_NOT_SUPPORTED } from './errors.js';
import { deparseStatement } from './plan/deparse.js';
import { PlanRefusal, clone } from './plan/nodes.js';

/** A view's query (one SELECT), or undefined when `schema.name` is not a view to read this way. */
export type ViewQueryOf = (schema: string | undefined, name: string) => string | undefined;

/** Views inside views deeper than this are refused (Postgres forbids cycles; this bounds work). */
const MAX_DEPTH = 16;

function refuseViews(what: string): never {
  throw new SqlError(
    SQLSTATE_FEATURE_NOT_SUPPORTED,
    `${what} cannot be read through the router as its view's query`,
  );
}

class Substitution {
  changed = false;
  constructor(
    private readonly queryOf: ViewQueryOf,
    private readonly depth: number,
  ) {}

  private fromItem(item: Node, ctes: ReadonlySet<string>): Node {
    if (!('RangeVar' in item)) {
      this.visit(item, ctes);
      return item;
    }
    const rv: RangeVar = item.RangeVar;
    const name = rv.relname ?? '';
    const schema = rv.schemaname === undefined || rv.schemaname === '' ? undefined : rv.schemaname;
    if (schema === undefined && ctes.has(name)) return item;
    const query = this.queryOf(schema, name);
    if (query === undefined) return item;
    if (this.depth >= MAX_DEPTH) refuseViews(`view ${name}, nested this deep,`);
    const parsed = parseStatements(query);
    const body = parsed.length === 1 ? parsed[0]!.node : undefined;
    if (body === undefined || !('SelectStmt' in body)) refuseViews(`view ${name}`);
    // The view's own views, read the same way (with none of this statement's CTE names).
    new Substitution(this.queryOf, this.depth + 1).visit(body, new Set());
    this.changed = true;
    return { RangeSubselect: { subquery: body, alias: rv.alias ?? { aliasname: name } } };
  }

  visit(value: unknown, ctes: ReadonlySet<string>): void {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) this.visit(v, ctes);
      return;
    }
    const o = value as Record<string, unknown>;
    // A WITH list's names hide views of the same name in the statement it belongs to.
    const scoped = withNames(o, ctes);
    for (const key of Object.keys(o)) {
      const v = o[key];
      if ((key === 'fromClause' || key === 'usingClause') && Array.isArray(v)) {
        o[key] = (v as Node[]).map((item) => this.fromItem(item, scoped));
      } else if ((key === 'larg' || key === 'rarg') && isNode(v) && !('SelectStmt' in v)) {
        // A JoinExpr's sides (a set operation's sides are SelectStmt bodies: visited as they are).
        o[key] = this.fromItem(v, scoped);
      } else {
        this.visit(v, scoped);
      }
    }
  }
}

/** `ctes` and the names of the WITH list of `o`, if it has one. */
function withNames(o: Record<string, unknown>, ctes: ReadonlySet<string>): ReadonlySet<string> {
  const w = o['withClause'] as { ctes?: Node[] } | undefined;
  if (w?.ctes === undefined) return ctes;
  const out = new Set(ctes);
  for (const c of w.ctes) if ('CommonTableExpr' in c) out.add(c.CommonTableExpr.ctename ?? '');
  return out;
}

function isNode(v: unknown): v is Node {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * `sql` (one statement) with every view `queryOf` knows read as its query; `sql` itself when it
 * reads none. Throws SqlError 0A000 when the rewritten text would not parse back to the same tree.
 */
export function substituteViews(sql: string, queryOf: ViewQueryOf): string {
  const stmts = parseStatements(sql);
  if (stmts.length !== 1) refuseViews('a string of several statements');
  const tree = clone(stmts[0]!.node);
  const s = new Substitution(queryOf, 0);
  s.visit(tree, new Set());
  if (!s.changed) return sql;
  try {
    return deparseStatement(tree);
  } catch (e) {
    if (e instanceof PlanRefusal) refuseViews('this statement');
    throw e;
  }
}
