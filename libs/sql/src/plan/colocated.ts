// Subqueries in FROM, CTEs and UNION ALL whose rows are node-local (PlanOptions.colocatedSubqueries):
// a query level over colocated sharded tables that neither aggregates, de-duplicates nor limits
// across its rows (or groups / de-duplicates by the shard key) gives each row from one node's rows
// alone, so the whole statement can run on every node and the router merge the results as rows of
// a sharded table. Levels that read only reference tables are `none` (every node has them whole).
import type { Node, SelectStmt } from 'libpg-query';
import type { SelectAnalysis } from '../types.js';
import type { PlannerCatalog } from './types.js';
import { analyzeNode } from '../analyze.js';
import { stringList } from '../ast.js';
import { containsAggregate, refuse } from './nodes.js';
import { checkColocated, checkOuterJoins } from './scope.js';
import { positionOf } from './order.js';

export type Locality = 'none' | 'local';

type Ctes = ReadonlyMap<string, Locality>;

export interface LevelSources {
  /** Top-scope sharded tables of the level (colocated with each other, checked). */
  readonly shardedTables: number;
  /** Node-local subqueries and CTE references in FROM (at most one, and then no sharded table). */
  readonly localItems: number;
  readonly analysis: SelectAnalysis;
  readonly hasOuterJoin: boolean;
}

function isSetOperation(s: SelectStmt): boolean {
  return s.op !== undefined && s.op !== 'SETOP_NONE';
}

/** The CTEs a level defines, classified in order (each sees the ones before it). */
function withCtes(s: SelectStmt, catalog: PlannerCatalog, outer: Ctes): Ctes {
  if (s.withClause === undefined) return outer;
  if (s.withClause.recursive === true) refuse('WITH RECURSIVE is not supported across nodes');
  const ctes = new Map(outer);
  for (const c of s.withClause.ctes ?? []) {
    if (!('CommonTableExpr' in c)) refuse('a WITH item could not be understood');
    const body = c.CommonTableExpr.ctequery;
    if (body === undefined || !('SelectStmt' in body))
      refuse('data-modifying statements in WITH are not supported across nodes');
    ctes.set(c.CommonTableExpr.ctename ?? '', queryLocality(body.SelectStmt, catalog, ctes));
  }
  return ctes;
}

/** Every subquery in an expression of this level (WHERE, ON, select list, ...) reads no sharded table. */
function checkSublinks(value: unknown, catalog: PlannerCatalog, ctes: Ctes): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) checkSublinks(v, catalog, ctes);
    return;
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key === 'withClause' || key === 'RangeSubselect') continue;
    const v = o[key];
    if (key === 'SubLink') {
      const sub = (v as { subselect?: Node }).subselect;
      if (sub !== undefined && 'SelectStmt' in sub) {
        if (queryLocality(sub.SelectStmt, catalog, ctes) !== 'none')
          refuse('a subquery over sharded tables outside FROM would need rows from several nodes');
      }
      checkSublinks((v as { testexpr?: unknown }).testexpr, catalog, ctes);
      continue;
    }
    checkSublinks(v, catalog, ctes);
  }
}

function fromItems(nodes: readonly Node[] | undefined, out: Node[]): Node[] {
  for (const n of nodes ?? []) {
    if ('JoinExpr' in n) {
      fromItems(
        [n.JoinExpr.larg, n.JoinExpr.rarg].filter((x): x is Node => x !== undefined),
        out,
      );
    } else out.push(n);
  }
  return out;
}

/** What one (non-set-operation) level reads, with its refusals: the part shared with the top level. */
export function levelSources(
  s: SelectStmt,
  catalog: PlannerCatalog,
  outer: Ctes = new Map(),
): LevelSources {
  const ctes = withCtes(s, catalog, outer);
  const localItem = new Set<Node>();
  const outerJoin = (n: Node | undefined): boolean =>
    n !== undefined &&
    'JoinExpr' in n &&
    ((n.JoinExpr.jointype ?? 'JOIN_INNER') !== 'JOIN_INNER' ||
      outerJoin(n.JoinExpr.larg) ||
      outerJoin(n.JoinExpr.rarg));
  const hasOuterJoin = (s.fromClause ?? []).some(outerJoin);
  for (const item of fromItems(s.fromClause, [])) {
    if ('RangeVar' in item) {
      const rv = item.RangeVar;
      const name = rv.relname ?? '';
      if (rv.schemaname === undefined && ctes.has(name)) {
        if (ctes.get(name) === 'local') localItem.add(item);
        continue;
      }
      const t = catalog.table(rv.schemaname, name);
      if (t === undefined) refuse(`table ${name} is not in the catalog`);
      if (t.kind === 'global')
        refuse(`global table ${name} cannot be combined with sharded tables across nodes`);
      continue;
    }
    if ('RangeSubselect' in item) {
      const sub = item.RangeSubselect;
      if (sub.lateral === true) refuse('LATERAL subqueries are not supported across nodes');
      const q = sub.subquery;
      if (q === undefined || !('SelectStmt' in q))
        refuse('a subquery in FROM could not be understood');
      if (queryLocality(q.SelectStmt, catalog, ctes) === 'local') localItem.add(item);
      continue;
    }
    refuse('functions in FROM are not supported across nodes');
  }
  checkSublinks({ ...s, fromClause: undefined }, catalog, ctes);
  checkSublinks(s.fromClause, catalog, ctes);
  const analysis = analyzeNode({ SelectStmt: s }, '', 0) as SelectAnalysis;
  const sharded: number[] = [];
  for (const [i, t] of analysis.tables.entries())
    if (t.scope === 'top' && catalog.table(t.schema, t.name)?.kind === 'sharded') sharded.push(i);
  checkColocated(analysis, catalog, sharded);
  if (localItem.size > 1 || (localItem.size === 1 && sharded.length > 0))
    refuse(
      'a subquery or CTE over sharded tables can be joined only with reference tables across nodes',
    );
  checkOuterJoins(s, catalog, (n) => localItem.has(n));
  return { shardedTables: sharded.length, localItems: localItem.size, analysis, hasOuterJoin };
}

/** A plain column of this level that is the key of one of its sharded tables; its keyspace. */
export function keyColumnKeyspace(
  node: Node | undefined,
  src: LevelSources,
  catalog: PlannerCatalog,
): string | undefined {
  if (node === undefined || !('ColumnRef' in node)) return undefined;
  const fields = stringList(node.ColumnRef.fields);
  const column = fields[fields.length - 1];
  const top = src.analysis.tables.filter((t) => t.scope === 'top');
  const named =
    fields.length === 1
      ? top.length === 1
        ? top
        : []
      : top.filter((t) => (t.alias ?? t.name) === fields[fields.length - 2]);
  for (const t of named) {
    const info = catalog.table(t.schema, t.name);
    if (info?.kind === 'sharded' && info.keyColumn === column) return info.keyspace ?? '';
  }
  return undefined;
}

function isKeyColumn(node: Node | undefined, src: LevelSources, catalog: PlannerCatalog): boolean {
  if (node === undefined || !('ColumnRef' in node)) return false;
  const fields = stringList(node.ColumnRef.fields);
  const column = fields[fields.length - 1];
  const top = src.analysis.tables.filter((t) => t.scope === 'top');
  const named =
    fields.length === 1
      ? top.length === 1
        ? top
        : []
      : top.filter((t) => (t.alias ?? t.name) === fields[fields.length - 2]);
  return named.some((t) => {
    const info = catalog.table(t.schema, t.name);
    return info?.kind === 'sharded' && info.keyColumn === column;
  });
}

function groupsByKey(s: SelectStmt, src: LevelSources, catalog: PlannerCatalog): boolean {
  const targets = (s.targetList ?? []).flatMap((n) => ('ResTarget' in n ? [n.ResTarget] : []));
  const resolve = (n: Node): Node | undefined => {
    const p = 'A_Const' in n ? positionOf(n) : undefined;
    return p === undefined ? n : targets[p]?.val;
  };
  if ((s.groupClause?.length ?? 0) > 0)
    return (s.groupClause ?? []).some((g) => isKeyColumn(resolve(g), src, catalog));
  if ((s.distinctClause?.length ?? 0) > 0)
    return targets.some((t) => isKeyColumn(t.val, src, catalog));
  return false;
}

/** Whether the rows of `s` are each made on one node (`local`), or it reads no sharded table. */
export function queryLocality(
  s: SelectStmt,
  catalog: PlannerCatalog,
  outer: Ctes = new Map(),
): Locality {
  if (isSetOperation(s)) {
    const ctes = withCtes(s, catalog, outer);
    if (s.op !== 'SETOP_UNION' || s.all !== true)
      refuse('UNION, INTERSECT and EXCEPT inside a query are not supported across nodes');
    if (s.limitCount !== undefined || s.limitOffset !== undefined)
      refuse('LIMIT in a subquery over sharded tables needs the rows of every node');
    const sides = [s.larg, s.rarg].map((b) =>
      b === undefined
        ? refuse('a UNION branch could not be understood')
        : queryLocality(b, catalog, ctes),
    );
    if (sides.every((x) => x === 'none')) return 'none';
    if (sides.every((x) => x === 'local')) return 'local';
    return refuse('a UNION ALL branch that reads no sharded table would come from every node');
  }
  const src = levelSources(s, catalog, outer);
  if (src.shardedTables === 0 && src.localItems === 0) return 'none';
  const shape = src.analysis.shape;
  if (shape.hasLocking) refuse('FOR UPDATE / FOR SHARE is not supported across nodes');
  if (shape.hasWindowFunctions)
    refuse('window functions in a subquery over sharded tables are not supported across nodes');
  if (shape.hasDistinctOn) refuse('DISTINCT ON is not supported across nodes');
  if (s.limitCount !== undefined || s.limitOffset !== undefined)
    refuse('LIMIT in a subquery over sharded tables needs the rows of every node');
  const aggregating =
    (s.groupClause?.length ?? 0) > 0 ||
    s.havingClause !== undefined ||
    containsAggregate(s.targetList);
  if (!aggregating && !shape.hasDistinct) return 'local';
  if (src.localItems === 0 && !src.hasOuterJoin && groupsByKey(s, src, catalog)) return 'local';
  return refuse(
    'a subquery over sharded tables that aggregates or removes duplicates is supported across nodes only when it groups by the shard key',
  );
}

/** True when the statement needs this module: WITH, or a subquery in FROM anywhere. */
export function hasNestedQueries(s: SelectStmt): boolean {
  return (
    s.withClause !== undefined || JSON.stringify(s.fromClause ?? []).includes('"RangeSubselect"')
  );
}
