// What a SELECT must look like before its rows can be merged across nodes at all: one query level
// over sharded tables that are colocated (joined on their keys), reference tables, and subqueries
// that only read reference tables (every node holds them whole). Everything else is refused.
import type { Node, SelectStmt } from 'libpg-query';
import type { SelectAnalysis } from '../types.js';
import type { PlannerCatalog, PlannerTable } from './types.js';
import { refuse, walk } from './nodes.js';

// Functions whose value depends on the node or its transaction: each node would answer differently.
const NODE_DEPENDENT_FUNCTIONS = new Set([
  'now',
  'transaction_timestamp',
  'statement_timestamp',
  'pg_backend_pid',
  'inet_server_addr',
  'inet_server_port',
  'txid_current',
  'txid_current_if_assigned',
  'pg_current_xact_id',
  'pg_current_xact_id_if_assigned',
  'pg_postmaster_start_time',
]);

function tableText(schema: string | undefined, name: string): string {
  return schema === undefined ? name : `${schema}.${name}`;
}

/**
 * Statement-level refusals that do not depend on the catalog. `nested`: subqueries in FROM and
 * WITH were checked by colocated.ts (PlanOptions.colocatedSubqueries) and may stay.
 */
export function checkStatementShape(
  s: SelectStmt,
  analysis: SelectAnalysis,
  nested = false,
  setOperation = false,
): void {
  if (s.op !== undefined && s.op !== 'SETOP_NONE' && !setOperation)
    refuse('set operations (UNION, INTERSECT, EXCEPT) are not supported across nodes');
  if (s.withClause !== undefined && !nested)
    refuse('WITH queries (CTEs) are not supported across nodes');
  if ((s.valuesLists?.length ?? 0) > 0) refuse('VALUES lists are not supported across nodes');
  if (s.intoClause !== undefined) refuse('SELECT INTO is not supported across nodes');
  if ((s.lockingClause?.length ?? 0) > 0)
    refuse('FOR UPDATE / FOR SHARE is not supported across nodes');
  if (analysis.shape.hasWindowFunctions) refuse('window functions are not supported across nodes');
  if (analysis.shape.hasDistinctOn) refuse('DISTINCT ON is not supported across nodes');
  if (s.limitOption === 'LIMIT_OPTION_WITH_TIES')
    refuse('FETCH FIRST ... WITH TIES is not supported across nodes');
  if (analysis.hasVolatileFunctions)
    refuse('volatile functions (random, nextval, ...) are not supported across nodes');
  walk(s, (tag, body) => {
    if (tag === 'RangeSubselect' && !nested)
      refuse('subqueries in FROM are not supported across nodes');
    if (tag === 'RangeFunction' || tag === 'RangeTableFunc')
      refuse('functions in FROM are not supported across nodes');
    if (tag === 'SQLValueFunction') {
      const op = (body as { op?: string }).op ?? '';
      if (!/USER|ROLE|CATALOG|SCHEMA/.test(op))
        refuse('the current date and time differ between nodes; use a constant instead');
    }
    if (tag === 'FuncCall') {
      const names = (body as { funcname?: { String?: { sval?: string } }[] }).funcname ?? [];
      const last = names[names.length - 1]?.String?.sval ?? '';
      if (NODE_DEPENDENT_FUNCTIONS.has(last))
        refuse(`${last}() differs between nodes and is not supported across nodes`);
    }
  });
  // A subquery may stay inside the leaf only in WHERE / ON, where it is evaluated per row.
  for (const part of [s.targetList, s.havingClause, s.sortClause, s.groupClause])
    walk(part, (tag) => {
      if (tag === 'SubLink') refuse('subqueries outside WHERE are not supported across nodes');
    });
}

function lookup(catalog: PlannerCatalog, schema: string | undefined, name: string): PlannerTable {
  const t = catalog.table(schema, name);
  if (t === undefined) refuse(`table ${tableText(schema, name)} is not in the catalog`);
  return t;
}

/**
 * Every sharded table at the top is in one keyspace and joined to the others on the key, so each
 * result row is built from rows of one node; nested (subquery) tables are reference tables.
 */
export function checkTables(analysis: SelectAnalysis, catalog: PlannerCatalog): void {
  const sharded: number[] = [];
  for (const [i, t] of analysis.tables.entries()) {
    const info = lookup(catalog, t.schema, t.name);
    const name = tableText(t.schema, t.name);
    if (info.kind === 'global')
      refuse(`global table ${name} cannot be combined with sharded tables across nodes`);
    if (t.scope === 'nested' && info.kind !== 'reference')
      refuse(`a subquery over sharded table ${name} would need rows from several nodes`);
    if (t.scope === 'top' && info.kind === 'sharded') sharded.push(i);
  }
  if (sharded.length === 0)
    refuse('the query reads no sharded table, so it must not be answered from several nodes');
  checkColocated(analysis, catalog, sharded);
}

/** The top-scope sharded tables `sharded` (indexes into analysis.tables) are joined on their keys. */
export function checkColocated(
  analysis: SelectAnalysis,
  catalog: PlannerCatalog,
  sharded: readonly number[],
): void {
  if (sharded.length <= 1) return;

  const parent = new Map<number, number>(sharded.map((i) => [i, i]));
  const find = (i: number): number => {
    let r = i;
    while (parent.get(r) !== r) r = parent.get(r) ?? r;
    return r;
  };
  const keyOf = (i: number | undefined): PlannerTable | undefined => {
    if (i === undefined || !parent.has(i)) return undefined;
    const t = analysis.tables[i];
    return t === undefined ? undefined : catalog.table(t.schema, t.name);
  };
  for (const eq of analysis.where.joinEqualities) {
    const l = keyOf(eq.left.tableIndex);
    const r = keyOf(eq.right.tableIndex);
    if (l === undefined || r === undefined) continue;
    if (l.keyColumn !== eq.left.column || r.keyColumn !== eq.right.column) continue;
    if (l.keyspace !== r.keyspace) continue;
    const a = find(eq.left.tableIndex ?? -1);
    const b = find(eq.right.tableIndex ?? -1);
    if (a !== b) parent.set(a, b);
  }
  const root = find(sharded[0] ?? -1);
  if (sharded.some((i) => find(i) !== root))
    refuse(
      'a join of sharded tables is supported across nodes only on their keys within one keyspace',
    );
}

/**
 * True when the FROM item holds a sharded table (each of its rows then lives on one node), or an
 * item `local` says is node-local (a colocated subquery or CTE).
 */
function holdsSharded(
  node: Node | undefined,
  catalog: PlannerCatalog,
  local: (item: Node) => boolean,
): boolean {
  if (node === undefined) return false;
  if (local(node)) return true;
  if ('RangeVar' in node) {
    const rv = node.RangeVar;
    return catalog.table(rv.schemaname, rv.relname ?? '')?.kind === 'sharded';
  }
  if ('JoinExpr' in node)
    return (
      holdsSharded(node.JoinExpr.larg, catalog, local) ||
      holdsSharded(node.JoinExpr.rarg, catalog, local)
    );
  return false;
}

/**
 * The preserved side of an outer join must hold a sharded table: a reference table there would
 * give its rows once per node, NULL-extended wherever that node has no match.
 */
export function checkOuterJoins(
  s: SelectStmt,
  catalog: PlannerCatalog,
  local: (item: Node) => boolean = () => false,
): void {
  walk(s.fromClause, (tag, body) => {
    if (tag !== 'JoinExpr') return;
    const j = body as { jointype?: string; larg?: Node; rarg?: Node };
    const left = j.jointype === 'JOIN_LEFT' || j.jointype === 'JOIN_FULL';
    const right = j.jointype === 'JOIN_RIGHT' || j.jointype === 'JOIN_FULL';
    if (
      (left && !holdsSharded(j.larg, catalog, local)) ||
      (right && !holdsSharded(j.rarg, catalog, local))
    )
      refuse(
        'an outer join that preserves the rows of a reference table is not supported across nodes',
      );
  });
}
