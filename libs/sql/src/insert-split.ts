// The pure parts of INSERT across nodes that the router cannot decide from the analysis alone:
// the column list of an INSERT without one (from the table's definition, which the router learns
// with TABLE_COLUMNS_SQL), and how INSERT ... SELECT runs: per node when the rows it selects on a
// node are exactly the rows that node must receive (colocated, key to key), else through the
// router (the SELECT as a read, its rows inserted by owner with insertValuesSql).
import type { InsertAnalysis } from './types.js';
import type { PlannerCatalog } from './plan/types.js';
import { parseStatements } from './parser.js';
import { SqlError, SQLSTATE_FEATURE_NOT_SUPPORTED, SQLSTATE_SYNTAX_ERROR } from './errors.js';
import { PlanRefusal } from './plan/nodes.js';
import { keyColumnKeyspace, levelSources, queryLocality } from './plan/colocated.js';
import { deparseStatement } from './plan/deparse.js';
import { quoteIdent, quoteQualified } from './quote.js';

/**
 * A table's columns in definition order ($1: the table's name as regclass text, e.g.
 * `public.orders`); dropped columns excluded. Asked of one node, cached by the router per table and
 * catalog epoch, and forgotten when DDL through the router touches the table.
 */
export const TABLE_COLUMNS_SQL =
  'select attname from pg_catalog.pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum';

/**
 * The target columns of an INSERT without a column list: the table's first columns, as many as the
 * VALUES rows have (Postgres fills the rest with defaults). 42601 when a row has more values than
 * the table has columns, as Postgres says it.
 */
export function implicitInsertColumns(
  a: InsertAnalysis,
  tableColumns: readonly string[],
): readonly string[] {
  if (a.columns !== undefined) return a.columns;
  if (a.source === 'default_values') return [];
  if (a.rows === undefined) return tableColumns;
  const width = Math.max(0, ...a.rows.map((r) => r.length));
  if (width > tableColumns.length)
    throw new SqlError(SQLSTATE_SYNTAX_ERROR, 'INSERT has more expressions than target columns');
  return tableColumns.slice(0, width);
}

export type InsertSelectPlan =
  /** The statement as it is, on every owner of the keyspace (atomically, 2PC). */
  | { readonly kind: 'per_node' }
  /**
   * Run `select` as a read (planRead when it spans nodes), then insert its rows by the owner of
   * column `keyIndex` into `columns` of the target with insertValuesSql, in one transaction.
   */
  | {
      readonly kind: 'via_router';
      readonly select: string;
      readonly columns: readonly string[];
      readonly keyIndex: number;
      /**
       * Columns the SELECT gives as a bare string literal or NULL: Postgres types them by their
       * target column (not as text), so their values are bound untyped (type 0).
       */
      readonly untyped: readonly number[];
    }
  | { readonly kind: 'refuse'; readonly reason: string };

/**
 * How INSERT INTO <sharded target> SELECT ... runs across nodes. `tableColumns`: the target's
 * columns in order (needed when the INSERT has no column list).
 */
export function planInsertSelect(
  a: InsertAnalysis,
  catalog: PlannerCatalog,
  tableColumns: readonly string[],
): InsertSelectPlan {
  const target = a.tables[a.targetIndex];
  const info = target === undefined ? undefined : catalog.table(target.schema, target.name);
  if (info?.kind !== 'sharded' || info.keyColumn === undefined)
    return { kind: 'refuse', reason: 'planInsertSelect is for INSERT into a sharded table' };
  if (a.source !== 'select') return { kind: 'refuse', reason: 'the INSERT has no SELECT' };
  const [only] = parseStatements(a.sql);
  const stmt = only !== undefined && 'InsertStmt' in only.node ? only.node.InsertStmt : undefined;
  const source = stmt?.selectStmt;
  if (stmt === undefined || source === undefined || !('SelectStmt' in source))
    return { kind: 'refuse', reason: 'the INSERT ... SELECT could not be understood' };
  const columns = a.columns ?? (tableColumns.length > 0 ? tableColumns : undefined);
  if (columns === undefined)
    return { kind: 'refuse', reason: 'the target table columns are not known' };
  const keyIndex = columns.indexOf(info.keyColumn);
  if (keyIndex < 0)
    return {
      kind: 'refuse',
      reason: `INSERT ... SELECT into sharded table ${target?.name ?? ''} must give a value for its key column "${info.keyColumn}"`,
    };
  try {
    if (stmt.withClause === undefined && queryLocality(source.SelectStmt, catalog) === 'local') {
      const src = levelSources(source.SelectStmt, catalog);
      const targets = (source.SelectStmt.targetList ?? []).flatMap((n) =>
        'ResTarget' in n ? [n.ResTarget] : [],
      );
      const keyspace = keyColumnKeyspace(targets[keyIndex]?.val, src, catalog);
      if (keyspace !== undefined && keyspace === (info.keyspace ?? '')) return { kind: 'per_node' };
    }
  } catch (e) {
    if (!(e instanceof PlanRefusal)) throw e;
  }
  if (a.onConflict !== undefined || a.hasReturning || stmt.withClause !== undefined)
    return {
      kind: 'refuse',
      reason:
        'INSERT ... SELECT whose rows must move between nodes is supported without WITH, ON CONFLICT and RETURNING',
    };
  const untyped: number[] = [];
  for (const [i, n] of (source.SelectStmt.targetList ?? []).entries()) {
    const v = 'ResTarget' in n ? n.ResTarget.val : undefined;
    if (v !== undefined && 'A_Const' in v && (v.A_Const.isnull === true || 'sval' in v.A_Const))
      untyped.push(i);
  }
  try {
    return { kind: 'via_router', select: deparseStatement(source), columns, keyIndex, untyped };
  } catch (e) {
    if (e instanceof PlanRefusal) return { kind: 'refuse', reason: e.message };
    throw e;
  }
}

/**
 * `INSERT INTO schema.table (columns) VALUES ($1, ..), ..` for `rowCount` rows. Bind each value with
 * the type the SELECT returned it as (its RowDescription type OID, text format): Postgres then
 * applies the same assignment cast as INSERT ... SELECT would.
 */
export function insertValuesSql(
  schema: string,
  table: string,
  columns: readonly string[],
  rowCount: number,
): string {
  if (!Number.isInteger(rowCount) || rowCount < 1)
    throw new RangeError('insertValuesSql: at least one row');
  if (columns.length === 0)
    throw new SqlError(SQLSTATE_FEATURE_NOT_SUPPORTED, 'an INSERT needs at least one column');
  // The protocol counts parameters in an int16: the router sends larger batches in parts.
  if (rowCount * columns.length > 65535)
    throw new RangeError('insertValuesSql: more than 65535 parameters; split the rows');
  const rows: string[] = [];
  let n = 1;
  for (let r = 0; r < rowCount; r++) {
    const items = columns.map(() => `$${n++}`);
    rows.push(`(${items.join(', ')})`);
  }
  return `insert into ${quoteQualified(schema, table)} (${columns.map(quoteIdent).join(', ')}) values ${rows.join(', ')}`;
}
