// Restricting a statement to the rows a node owns (docs/architecture.md, "Reads during moves"):
// while a range moves, its rows sit on two nodes, and a statement sent to both must read each
// row once. Every reference to a restricted table in a FROM list becomes
// `(SELECT * FROM t WHERE <ownership>) AS t`; an UPDATE or DELETE target gets the predicate
// ANDed to its WHERE. Anything else that names such a table is refused (0A000), never sent as is.
import type { ColumnRef, Node, RangeVar } from 'libpg-query';
import { parseStatements } from './parser.js';
import { quoteIdent } from './quote.js';
import { SqlError, SQLSTATE_FEATURE_NOT_SUPPORTED } from './errors.js';
import { clone, walk } from './plan/nodes.js';
import { expressionNode, rebuiltSql } from './rewrite-tree.js';

/**
 * For a table reference as written (schema undefined when unqualified), the ownership predicate
 * builder, or undefined when the table needs no restriction. The builder gets the key column's
 * qualifier (an already quoted alias) or undefined for the bare column name.
 */
export type RestrictionOf = (
  schema: string | undefined,
  name: string,
) => ((qualifier: string | undefined) => string) | undefined;

function refuseRestrict(what: string): never {
  throw new SqlError(
    SQLSTATE_FEATURE_NOT_SUPPORTED,
    `${what} cannot be restricted to the rows each node owns while a range of its keyspace moves`,
  );
}

class Restrictor {
  changed = false;
  constructor(
    private readonly restrictionOf: RestrictionOf,
    private readonly cteNames: ReadonlySet<string>,
    /** System columns the statement names, selected by the subquery too (`keepSystemColumns`). */
    private readonly systemColumns: readonly string[] = [],
  ) {}

  private restriction(rv: RangeVar): ((q: string | undefined) => string) | undefined {
    const name = rv.relname ?? '';
    const schema = rv.schemaname === undefined || rv.schemaname === '' ? undefined : rv.schemaname;
    if (schema === undefined && this.cteNames.has(name)) return undefined;
    return this.restrictionOf(schema, name);
  }

  /** A FROM item: a restricted table becomes a subquery of its owned rows, same alias. */
  fromItem(item: Node): Node {
    if (!('RangeVar' in item)) {
      this.visit(item);
      return item;
    }
    const rv = item.RangeVar;
    const pred = this.restriction(rv);
    if (pred === undefined) return item;
    const table: RangeVar = { ...rv };
    delete table.alias;
    const columns = ['*', ...this.systemColumns].join(', ');
    const select = parseStatements(`SELECT ${columns} FROM tessera_restricted`)[0]!.node;
    if (!('SelectStmt' in select)) throw new Error('unreachable');
    select.SelectStmt.fromClause = [{ RangeVar: table }];
    select.SelectStmt.whereClause = expressionNode(pred(undefined));
    this.changed = true;
    return {
      RangeSubselect: {
        subquery: select,
        alias: rv.alias ?? { aliasname: rv.relname ?? '' },
      },
    };
  }

  /** An UPDATE or DELETE target: the predicate ANDed to the statement's WHERE. */
  target(body: { relation?: RangeVar; whereClause?: Node }): void {
    const rv = body.relation;
    if (rv === undefined) return;
    const pred = this.restriction(rv);
    if (pred === undefined) return;
    const owned = expressionNode(pred(quoteIdent(rv.alias?.aliasname ?? rv.relname ?? '')));
    const where = body.whereClause;
    // The grammar flattens `a AND b AND c` into one AND: so must we, or the text reads back otherwise.
    if (where === undefined) body.whereClause = owned;
    else if ('BoolExpr' in where && where.BoolExpr.boolop === 'AND_EXPR')
      where.BoolExpr.args = [...(where.BoolExpr.args ?? []), owned];
    else body.whereClause = { BoolExpr: { boolop: 'AND_EXPR', args: [where, owned] } };
    this.changed = true;
  }

  visit(value: unknown): void {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) this.visit(v);
      return;
    }
    const o = value as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      const v = o[key];
      if ((key === 'fromClause' || key === 'usingClause') && Array.isArray(v)) {
        o[key] = (v as Node[]).map((item) => this.fromItem(item));
      } else if ((key === 'larg' || key === 'rarg') && isNode(v)) {
        // A JoinExpr's sides (a set operation's sides are SelectStmt bodies: visited as they are).
        o[key] = this.fromItem(v);
      } else if (key === 'UpdateStmt' || key === 'DeleteStmt') {
        const body = v as { relation?: RangeVar; whereClause?: Node };
        this.target(body);
        const { relation, ...rest } = body;
        void relation;
        this.visit(rest);
      } else if (key === 'InsertStmt') {
        const { relation, ...rest } = v as { relation?: RangeVar };
        void relation;
        this.visit(rest);
      } else if (key === 'lockedRels' || key === 'intoClause') {
        // FOR UPDATE OF names the alias, which the subquery keeps; SELECT INTO's new table.
      } else if (key === 'RangeVar') {
        this.checkStray(v as RangeVar);
      } else {
        this.visit(v);
      }
    }
  }

  /** A table named where it cannot be rewritten (TABLESAMPLE, ...): refused if restricted. */
  private checkStray(rv: RangeVar): void {
    if (this.restriction(rv) !== undefined)
      refuseRestrict(`this reference to ${rv.relname ?? 'a table'}`);
  }
}

function isNode(v: unknown): v is Node {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const SYSTEM_COLUMNS = new Set(['ctid', 'xmin', 'xmax', 'cmin', 'cmax', 'tableoid']);

/** The system columns `tree` names, and whether it has a `*` (which would expand them too). */
function systemColumnsOf(tree: Node): { names: string[]; star: boolean } {
  const names = new Set<string>();
  let star = false;
  walk(tree, (tag, body) => {
    if (tag !== 'ColumnRef') return;
    const last = (body as ColumnRef).fields?.at(-1);
    if (last !== undefined && 'A_Star' in last) star = true;
    if (last !== undefined && 'String' in last && SYSTEM_COLUMNS.has(last.String.sval ?? ''))
      names.add(last.String.sval!);
  });
  return { names: [...names].sort(), star };
}

function cteNamesOf(value: unknown, out: Set<string>): Set<string> {
  if (value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    for (const v of value) cteNamesOf(v, out);
    return out;
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key === 'CommonTableExpr') {
      const name = (o[key] as { ctename?: string }).ctename;
      if (name !== undefined) out.add(name);
    }
    cteNamesOf(o[key], out);
  }
  return out;
}

/**
 * `sql` (one statement) with every reference to a restricted table limited to the rows its
 * restriction keeps; `sql` itself when no reference needs it. Throws SqlError 0A000 when a
 * reference cannot be rewritten or the rebuilt text would not parse back to the same tree.
 * `keepSystemColumns`: the subquery selects the system columns the statement names (`tableoid`,
 * ...) after its `*`, so they keep their meaning (refused when the statement has a `*`, which
 * would then show them); without it a statement naming one is refused.
 */
export function restrictTables(
  sql: string,
  restrictionOf: RestrictionOf,
  keepSystemColumns = false,
): string {
  const stmts = parseStatements(sql);
  if (stmts.length !== 1) refuseRestrict('a string of several statements');
  const tree = clone(stmts[0]!.node);
  const ctes = cteNamesOf(tree, new Set());
  for (const name of ctes)
    if (restrictionOf(undefined, name) !== undefined)
      refuseRestrict(`a WITH query named like the table ${name}`);
  const system = systemColumnsOf(tree);
  const keep = keepSystemColumns && !(system.star && system.names.length > 0);
  const r = new Restrictor(restrictionOf, ctes, keep ? system.names : []);
  r.visit(tree);
  if (!r.changed) return sql;
  // A subquery has no system columns: `ctid` would fail there although the table has one.
  if (!keep && system.names.length > 0) refuseRestrict('a statement naming a system column');
  return rebuiltSql(tree, () => refuseRestrict('this statement'));
}
