// Routing of DDL and maintenance (VACUUM, ANALYZE): what touches distributed tables, or objects
// every node needs, runs on all nodes (a sharded table's CREATE TABLE adds each node's fence);
// what touches only global tables stays on home.
import type { DdlAnalysis, MaintenanceAnalysis } from '@tessera/sql';
import { makesTemp, quoteIdent, quoteQualified } from '@tessera/sql';
import { ddlRefusalForMove, fenceCheckSql } from '@tessera/keyspace';
import type { Snapshot, TableView } from '@tessera/keyspace';
import type { ParamSource } from './key-hash.js';
import { route } from './route.js';
import { home, refuse, type Route } from './route-types.js';
import { creationSchema, namesOf } from './names.js';
import { classify, lookupTable, qualified, shardedViewOf, type ShardedView } from './tables.js';

/** Commands that create or change objects every node needs (schemas, types, extensions, roles...). */
const EVERY_NODE_COMMANDS: ReadonlySet<string> = new Set([
  'create_schema',
  'drop_schema',
  'create_type',
  'alter_type',
  'drop_type',
  'create_extension',
  'alter_extension',
  'drop_extension',
  'create_domain',
  'drop_domain',
  'create_role',
  'alter_role',
  'drop_role',
  'grant_role',
  'revoke_role',
  'create_function',
  'alter_function',
  'drop_function',
  'drop_procedure',
  'create_collation',
  'drop_collation',
]);

export function routeDdl(
  a: DdlAnalysis,
  catalog: Snapshot,
  params: ParamSource | undefined,
): Route {
  const shadowed = temporaryShadowing(a, catalog);
  if (shadowed !== undefined)
    return refuse(
      `a temporary ${shadowed.kind === 'sharded' ? 'table' : 'object'} named like ${shadowed.kind} table ${qualified(shadowed)} would hide it from this session's unqualified names, which the router resolves to the ${shadowed.kind} table: choose another name`,
    );
  const nonKey = uniqueWithoutKey(a, catalog);
  if (nonKey !== undefined)
    return refuse(
      `a PRIMARY KEY, UNIQUE or EXCLUDE constraint (or unique index) on sharded table ${qualified(nonKey)} must include its key column "${nonKey.keyColumn}": each node checks only its own rows, so a duplicate on another node could not be refused`,
    );
  if (a.command === 'create_view' && !makesTemp(a)) return routeCreateView(a, catalog);
  return routeObjects(a, catalog, params);
}

/**
 * A uniqueness (PRIMARY KEY, UNIQUE, EXCLUDE, a unique index) on a sharded table that leaves out
 * its key column: each node would check only its own rows, so duplicates on different nodes
 * would be accepted. The table it is on, if so.
 */
function uniqueWithoutKey(a: DdlAnalysis, catalog: Snapshot): ShardedView | undefined {
  if (a.uniqueKeys.length === 0) return undefined;
  const t = a.createTable ?? a.tables.find((x) => x.role === 'target');
  if (t === undefined) return undefined;
  const view = lookupTable(catalog, t.schema, t.name);
  if (view.kind !== 'sharded') return undefined;
  return a.uniqueKeys.some((cols) => !cols.includes(view.keyColumn)) ? view : undefined;
}

function routeObjects(a: DdlAnalysis, catalog: Snapshot, params: ParamSource | undefined): Route {
  const all = (after = new Map<string, string>()): Route => ({
    kind: 'all',
    nodes: catalog.nodes,
    after,
    why: 'ddl',
  });
  if (a.command === 'create_table' && a.createTable !== undefined) {
    const ct = a.createTable;
    const view = lookupTable(catalog, ct.schema, ct.name);
    const misplaced =
      ct.partitionOf && misplacedPartition(catalog, view, ct.schema, ct.partitionOf);
    if (misplaced) return misplaced;
    if (ct.temporary || view.kind === 'global') return home(catalog, false);
    if (view.kind === 'reference') return all();
    if (
      !ct.hasLike &&
      ct.partitionOf === undefined &&
      !ct.columns.some((c) => c.name === view.keyColumn)
    ) {
      return refuse(
        `table ${qualified(view)} is declared sharded by column "${view.keyColumn}", which this CREATE TABLE does not define`,
      );
    }
    const after = new Map<string, string>();
    for (const node of catalog.nodes)
      after.set(node, fenceStatement(view, fenceCheck(catalog, view, node)));
    return all(after);
  }
  if (
    a.command === 'create_table_as' ||
    a.command === 'create_materialized_view' ||
    a.command === 'create_view'
  ) {
    const obj = a.objects[0];
    const view = obj ? lookupTable(catalog, obj.schema, obj.name) : undefined;
    if (view && view.kind !== 'global')
      return refuse(
        `${a.command.replace(/_/g, ' ').toUpperCase()} for declared ${view.kind} table ${qualified(view)} is not supported yet; create it with CREATE TABLE`,
      );
    if (a.query) {
      const inner = route(a.query, catalog, params);
      if (inner.kind === 'node' && !inner.flexible && inner.node !== catalog.home) {
        return refuse(
          `${a.command.replace(/_/g, ' ').toUpperCase()} reading sharded tables is not supported yet (the new table is global, on the home node)`,
        );
      }
      if (inner.kind === 'refuse') return inner;
      if (inner.kind === 'scatter')
        return refuse(
          `${a.command.replace(/_/g, ' ').toUpperCase()} reading rows from several nodes is not supported yet`,
        );
    }
    return home(catalog, false);
  }
  const views = [
    ...a.tables.map((r) => relation(catalog, r.schema, r.name)),
    ...a.objects
      .filter((o) => o.type === 'table' || o.type === 'foreign table' || o.type === 'view')
      .map((o) => relation(catalog, o.schema, o.name)),
  ];
  const distributed = views.filter((v) => v.kind !== 'global');
  for (const v of distributed) {
    if (v.kind !== 'sharded') continue;
    const moving = ddlRefusalForMove(catalog.moves, v.keyspace.name, qualified(v));
    if (moving !== undefined) return refuse(moving.message, moving.code, moving.hint);
  }
  if (distributed.length > 0) {
    const global = views.find((v) => v.kind === 'global');
    if (global) {
      return refuse(
        `this ${a.command.replace(/_/g, ' ').toUpperCase()} names both distributed table ${qualified(distributed[0]!)} and global table ${qualified(global)}; run it once for each kind`,
      );
    }
    return all();
  }
  if (EVERY_NODE_COMMANDS.has(a.command)) return all();
  return home(catalog, false);
}

/**
 * CREATE TABLE ... PARTITION OF: a partition holds its parent's rows, so it must be declared as
 * its parent is (sharded in the same keyspace by the same column, reference, or neither), or the
 * router would look for its rows where they are not (an undeclared partition of a sharded table
 * on home alone). The refusal, if it is not.
 */
function misplacedPartition(
  catalog: Snapshot,
  view: TableView,
  schemaWritten: string | undefined,
  parentName: { readonly schema: string | undefined; readonly name: string },
): Route | undefined {
  const parent = lookupTable(catalog, parentName.schema, parentName.name);
  if (placedAlike(parent, view)) return undefined;
  // A new table's schema when its name is not qualified: where CREATE puts it.
  const name =
    view.kind === 'global' && schemaWritten === undefined
      ? `${creationSchema(namesOf(catalog))}.${view.name}`
      : qualified(view);
  const declare =
    parent.kind === 'sharded'
      ? `tessera table distribute ${name} --column ${parent.keyColumn} --keyspace ${parent.keyspace.name}`
      : parent.kind === 'reference'
        ? `tessera table reference ${name}`
        : undefined;
  return refuse(
    `table ${name} (${view.kind === 'sharded' ? `sharded by column "${view.keyColumn}" in keyspace "${view.keyspace.name}"` : view.kind}) cannot be a partition of ${parent.kind} table ${qualified(parent)}: a partition must be declared as its parent is, or the router would look for its rows where they are not`,
    '0A000',
    declare === undefined
      ? `create the partition under another name, or make it a table of its own`
      : `declare it first: ${declare}`,
  );
}

function placedAlike(a: TableView, b: TableView): boolean {
  if (a.kind === 'sharded' || b.kind === 'sharded')
    return (
      a.kind === 'sharded' &&
      b.kind === 'sharded' &&
      a.keyspace.name === b.keyspace.name &&
      a.keyColumn === b.keyColumn
    );
  return a.kind === b.kind;
}

/**
 * CREATE [OR REPLACE] VIEW: over distributed tables (or views) on every node, in one transaction
 * across them like other DDL; over global tables only on home, as before. A view reading both
 * could exist on home only, where the distributed tables' rows are not: refused.
 */
function routeCreateView(a: DdlAnalysis, catalog: Snapshot): Route {
  const target = a.tables.find((t) => t.role === 'target');
  const declared =
    target === undefined ? undefined : declaredTable(catalog, target.schema, target.name);
  if (declared !== undefined)
    return refuse(
      `CREATE VIEW for declared ${declared.kind} table ${qualified(declared)} is not supported; create it with CREATE TABLE`,
    );
  const read = a.tables
    .filter((t) => t.role !== 'target')
    .map((t) => relation(catalog, t.schema, t.name));
  const distributed = read.find((v) => v.kind !== 'global');
  if (distributed === undefined) return home(catalog, false);
  const global = read.find((v) => v.kind === 'global');
  if (global !== undefined)
    return refuse(
      `a view reading both distributed table ${qualified(distributed)} and global table ${qualified(global)} is not supported (it could exist on the home node only, where the distributed table's rows are not)`,
    );
  return { kind: 'all', nodes: catalog.nodes, after: new Map(), why: 'ddl' };
}

/** A table the catalog declares under this name (not a view that reads like a reference table). */
function declaredTable(
  catalog: Snapshot,
  schema: string | undefined,
  name: string,
): TableView | undefined {
  const t = lookupTable(catalog, schema, name);
  return t.kind !== 'global' && catalog.table(t.schema, t.name) !== undefined ? t : undefined;
}

/**
 * What DDL naming `schema.name` must reach: a table's kind, and a view over sharded tables
 * counted with the distributed ones (it exists on every node).
 */
function relation(catalog: Snapshot, schema: string | undefined, name: string): TableView {
  const view = shardedViewOf(catalog, schema, name);
  if (view !== undefined) return { kind: 'reference', schema: view.schema, name: view.name };
  return lookupTable(catalog, schema, name);
}

export function routeMaintenance(a: MaintenanceAnalysis, catalog: Snapshot): Route {
  if (a.tables.length === 0)
    return { kind: 'all', nodes: catalog.nodes, after: new Map(), why: 'maintenance' };
  const t = classify(a.tables, catalog);
  if (t.sharded.length + t.reference.length === 0) return home(catalog, false);
  if (t.global.length > 0) {
    return refuse(
      `this ${a.kind.toUpperCase()} names both distributed and global tables (${qualified(t.global[0]!.view)}); run it once for each kind`,
    );
  }
  return { kind: 'all', nodes: catalog.nodes, after: new Map(), why: 'maintenance' };
}

/** The body of the `tessera_owns` CHECK for `view` on `node` (`false` when it owns nothing). */
function fenceCheck(catalog: Snapshot, view: ShardedView, node: string): string {
  const ks = view.keyspace;
  const owned = catalog.ownedRanges(node).get(ks.name) ?? [];
  return fenceCheckSql(quoteIdent(view.keyColumn), ks.keyType, ks.seed, owned);
}

/** The fence a node gets on a sharded table, idempotent so CREATE TABLE IF NOT EXISTS can rerun it. */
export function fenceStatement(view: ShardedView, check: string): string {
  const table = quoteQualified(view.schema, view.name);
  const literal = `'${table.replace(/'/g, "''")}'`;
  return (
    `DO $tessera_fence$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = ${literal}::regclass AND conname = 'tessera_owns') ` +
    `THEN ALTER TABLE ${table} ADD CONSTRAINT tessera_owns CHECK (${check}) NOT VALID; END IF; END $tessera_fence$`
  );
}

/**
 * The catalog table a temporary object made by `a` is named like. Postgres searches pg_temp
 * first, so that name would mean the temporary object for the session, while the router's name
 * resolution does not follow temporary objects: such a CREATE is refused.
 */
function temporaryShadowing(a: DdlAnalysis, catalog: Snapshot): TableView | undefined {
  if (!makesTemp(a)) return undefined;
  const names = new Set(a.objects.map((o) => o.name));
  if (a.createTable !== undefined) names.add(a.createTable.name);
  return catalog.tables.find((t) => names.has(t.name));
}
