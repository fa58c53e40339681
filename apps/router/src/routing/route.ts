// route(analysis, catalog, params) -> Route: the routing rules of DESIGN.md section 3 as one
// pure function over plain data, unit-tested without sockets. The session executes the Route.
import type {
  Analysis,
  DdlAnalysis,
  InsertAnalysis,
  KeyPin,
  MaintenanceAnalysis,
  WhereFacts,
} from '@tessera/sql';
import { quoteQualified } from '@tessera/sql';
import type { RoutingCatalog } from './catalog-view.js';
import { hashPinValues, type ParamSource } from './key-hash.js';
import type { NodeRoute, Route } from './route-types.js';
import {
  classify,
  lookupTable,
  qualified,
  type ClassifiedTables,
  type ShardedView,
} from './tables.js';

/** Parameters are unknown (Parse without Bind): routes that need them come back as 'params'. */
export const NO_PARAMS: ParamSource | undefined = undefined;

export function route(
  a: Analysis,
  catalog: RoutingCatalog,
  params: ParamSource | undefined,
): Route {
  switch (a.kind) {
    case 'select':
      return routeDml(a, a.where, catalog, params, 'select');
    case 'update': {
      const t = classify(a.tables, catalog);
      const target = t.sharded.find((s) => s.index === a.targetIndex);
      if (target && a.setColumns.includes(target.view.keyColumn)) {
        return refuse(
          `an UPDATE that changes the key column "${target.view.keyColumn}" of sharded table ${qualified(target.view)} is not supported (the row would have to move between nodes)`,
        );
      }
      return routeDml(a, a.where, catalog, params, 'UPDATE');
    }
    case 'delete':
      return routeDml(a, a.where, catalog, params, 'DELETE');
    case 'insert':
      return routeInsert(a, catalog, params);
    case 'copy_from': {
      const view = lookupTable(
        catalog,
        a.tables[a.targetIndex]?.schema,
        a.tables[a.targetIndex]?.name ?? '',
      );
      if (a.source !== 'stdin') return home(catalog, false);
      if (view.kind === 'global') return { kind: 'copy', mode: 'node', node: catalog.home };
      if (view.kind === 'reference') return { kind: 'copy', mode: 'all', nodes: catalog.nodes };
      if (view.keyspace.owners.length === 1)
        return { kind: 'copy', mode: 'node', node: view.keyspace.owners[0]! };
      if (a.options.format === 'binary')
        return refuse(
          `COPY FROM STDIN in binary format into sharded table ${qualified(view)} is not supported yet; use text or csv`,
        );
      if (a.hasWhere)
        return refuse(
          `COPY FROM ... WHERE into sharded table ${qualified(view)} is not supported yet`,
        );
      return {
        kind: 'copy',
        mode: 'split',
        nodes: view.keyspace.owners,
        keyColumn: view.keyColumn,
        keyspace: view.keyspace,
        schema: view.schema,
        table: view.name,
      };
    }
    case 'copy_to':
      if (a.query !== undefined) return route(a.query, catalog, params);
      return routeDml(a, NO_WHERE, catalog, params, 'read');
    case 'ddl':
      return routeDdl(a, catalog, params);
    case 'explain': {
      const inner = route(a.inner, catalog, params);
      if (
        inner.kind === 'node' ||
        inner.kind === 'refuse' ||
        inner.kind === 'params' ||
        inner.kind === 'scatter'
      )
        return inner;
      return refuse('EXPLAIN of a statement that runs on several nodes is not supported yet');
    }
    case 'vacuum':
    case 'analyze':
      return routeMaintenance(a, catalog);
    case 'utility':
      if (a.query !== undefined) return route(a.query, catalog, params);
      if (a.command === 'lock') return routeDml(a, NO_WHERE, catalog, params, 'LOCK');
      // FETCH, MOVE, CLOSE work on the node holding the cursor; DO, CALL and the rest on home.
      return home(
        catalog,
        a.command === 'fetch' ||
          a.command === 'move' ||
          a.command === 'close' ||
          a.command === 'checkpoint',
      );
    case 'show':
    case 'transaction':
    case 'set':
    case 'discard':
    case 'deallocate':
    case 'listen':
    case 'unlisten':
      return home(catalog, true);
    case 'prepare':
    case 'execute':
      return refuse(
        'SQL-level PREPARE and EXECUTE are not supported through the router; use the extended query protocol (driver prepared statements)',
      );
    case 'notify':
      return home(catalog, false);
    default:
      return assertNever(a);
  }
}

const NO_WHERE: WhereFacts = {
  hasWhere: false,
  pins: [],
  joinEqualities: [],
  hasOr: false,
  hasNaturalJoin: false,
  isCurrentOf: false,
};

function refuse(message: string): Route {
  return { kind: 'refuse', message };
}

function home(catalog: RoutingCatalog, flexible: boolean): NodeRoute {
  return { kind: 'node', node: catalog.home, label: 'home', flexible };
}

function single(node: string): NodeRoute {
  return { kind: 'node', node, label: 'single', flexible: false };
}

/** `select`: a plain SELECT, which may be planned across nodes; `read`: reads inside other statements. */
type Verb = 'select' | 'read' | 'UPDATE' | 'DELETE' | 'LOCK';

/** SELECT, UPDATE, DELETE, COPY TO, LOCK: the node(s) the rows live on. */
function routeDml(
  a: Analysis,
  where: WhereFacts,
  catalog: RoutingCatalog,
  params: ParamSource | undefined,
  verb: Verb,
): Route {
  const t = classify(a.tables, catalog);
  const writesReference = t.writes.some((w) => w.view.kind === 'reference');
  if (t.sharded.length === 0) return routeUnsharded(a, t, catalog);
  // Only error messages name the tables: built when one is, not per routed statement.
  const names = (): string[] => t.sharded.map((s) => qualified(s.view));
  if (t.global.length > 0) {
    return refuse(
      `a join of sharded table ${names()[0]} with global table ${qualified(t.global[0]!.view)} is not supported (the global table lives on the home node only)`,
    );
  }
  if (writesReference) {
    const w = t.writes.find((x) => x.view.kind === 'reference')!;
    return refuse(
      `a write to reference table ${qualified(w.view)} that reads sharded table ${names()[0]} is not supported (it must run on every node)`,
    );
  }
  const nested = t.sharded.find((s) => s.ref.scope === 'nested');
  const nodes = pinnedNodes(t, where, params);
  if (nodes === 'params') return { kind: 'params' };
  if (nodes === 'mixed') {
    return refuse(
      `sharded tables ${names().join(', ')} are not joined on their key columns (or are in different keyspaces), so their rows may live on different nodes; ${crossNodeWhat(verb)} is not supported yet`,
    );
  }
  if (nodes.size === 1) {
    const node = nodes.values().next().value!;
    // A subquery on a sharded table can only be answered by this node if that table has its key
    // pinned too, which the analysis does not expose for nested scopes; unless one node owns all.
    if (nested && nested.view.keyspace.owners.length > 1) {
      return refuse(
        `a subquery or CTE reading sharded table ${qualified(nested.view)} is not supported yet (its rows may live on other nodes)`,
      );
    }
    return single(node);
  }
  // The planner decides whether it can be merged exactly (or refuses with its own sentence).
  if (verb === 'select') return { kind: 'scatter', nodes: [...nodes].sort() };
  if (verb === 'UPDATE' || verb === 'DELETE') {
    // Each node updates its own rows, so the statement must not depend on rows elsewhere (a
    // subquery on a sharded table would see only its node's) nor name one physical row (a
    // cursor, a ctid: every node has a row at that spot).
    if (nested)
      return refuse(
        `an ${verb} whose rows span nodes with a subquery or CTE reading sharded table ${qualified(nested.view)} is not supported yet`,
      );
    if (where.isCurrentOf)
      return refuse(`${verb} ... WHERE CURRENT OF on rows that span nodes is not supported`);
    if (/\bctid\b/i.test(a.sql))
      return refuse(`an ${verb} naming ctid whose rows span nodes is not supported`);
    return { kind: 'multi_write', nodes: [...nodes].sort() };
  }
  const first = t.sharded[0]!;
  return refuse(
    `${crossNodeWhat(verb)} is not supported yet (the key column "${first.view.keyColumn}" of ${qualified(first.view)} is not pinned to one node by the WHERE clause)`,
  );
}

function crossNodeWhat(verb: Verb): string {
  switch (verb) {
    case 'select':
    case 'read':
      return 'a read across nodes';
    case 'LOCK':
      return 'LOCK of a sharded table (it spans nodes)';
    default:
      return `an ${verb} whose rows span nodes`;
  }
}

/**
 * The nodes the rows of the statement's sharded tables can be on, judged by key pins and key
 * equalities; 'mixed' if the tables are not colocated by the statement itself.
 */
function pinnedNodes(
  t: ClassifiedTables,
  where: WhereFacts,
  params: ParamSource | undefined,
): Set<string> | 'mixed' | 'params' {
  const tables = t.sharded;
  const keyspace = tables[0]!.view.keyspace;
  if (tables.some((s) => s.view.keyspace.name !== keyspace.name)) {
    return keyspace.owners.length === 1 &&
      tables.every((s) => s.view.keyspace.owners.join() === keyspace.owners.join())
      ? new Set(keyspace.owners)
      : 'mixed';
  }
  // Union-find over top-scope sharded references joined key = key.
  const top = tables.filter((s) => s.ref.scope === 'top');
  const parent = new Map<number, number>(top.map((s) => [s.index, s.index]));
  const find = (i: number): number => {
    let r = i;
    while (parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  const keyOf = new Map<number, string>(top.map((s) => [s.index, s.view.keyColumn]));
  for (const eq of where.joinEqualities) {
    const l = eq.left.tableIndex;
    const r = eq.right.tableIndex;
    if (l === undefined || r === undefined || !parent.has(l) || !parent.has(r)) continue;
    if (keyOf.get(l) === eq.left.column && keyOf.get(r) === eq.right.column)
      parent.set(find(l), find(r));
  }
  const roots = new Set(top.map((s) => find(s.index)));
  if (roots.size > 1 && keyspace.owners.length > 1) return 'mixed';

  let nodes: Set<string> | undefined;
  let needsParams = false;
  for (const pin of where.pins) {
    if (pin.ambiguous || pin.tableIndex === undefined || keyOf.get(pin.tableIndex) !== pin.column)
      continue;
    const owners = ownersOfPin(pin, keyspace, params);
    if (owners === 'params') {
      needsParams = true;
      continue;
    }
    if (owners === 'unpinnable') continue;
    nodes = nodes === undefined ? owners : new Set([...nodes].filter((n) => owners.has(n)));
  }
  if (nodes !== undefined) {
    // `key = NULL` or disjoint pins match no row: any one owner answers (with nothing).
    return nodes.size === 0 ? new Set([keyspace.owners[0]!]) : nodes;
  }
  if (needsParams) return 'params';
  return new Set(keyspace.owners);
}

function ownersOfPin(
  pin: KeyPin,
  keyspace: ShardedView['keyspace'],
  params: ParamSource | undefined,
): Set<string> | 'params' | 'unpinnable' {
  if (pin.matchesNothing) return new Set();
  const hashes = hashPinValues(pin.values, keyspace.keyType, keyspace.seed, params);
  if (hashes === 'params' || hashes === 'unpinnable') return hashes;
  const owners = new Set<string>();
  for (const h of hashes) if (h !== null) owners.add(keyspace.ownerOf(h));
  return owners;
}

/** No sharded table: reference tables anywhere (written: everywhere), global tables at home. */
function routeUnsharded(a: Analysis, t: ClassifiedTables, catalog: RoutingCatalog): Route {
  const refWrite = t.writes.find((w) => w.view.kind === 'reference');
  if (refWrite) {
    if (t.global.length > 0) {
      return refuse(
        `a write to reference table ${qualified(refWrite.view)} that reads global table ${qualified(t.global[0]!.view)} is not supported (it must run on every node)`,
      );
    }
    if (a.hasVolatileFunctions) {
      return refuse(
        `a write to reference table ${qualified(refWrite.view)} calling a volatile function is not supported (each node would store a different value)`,
      );
    }
    return { kind: 'all', nodes: catalog.nodes, after: new Map(), why: 'reference_write' };
  }
  if (t.global.length > 0) return home(catalog, false);
  // Reference tables only, or no table at all: every node answers alike.
  return home(catalog, true);
}

function routeInsert(
  a: InsertAnalysis,
  catalog: RoutingCatalog,
  params: ParamSource | undefined,
): Route {
  const targetRef = a.tables[a.targetIndex];
  const target = lookupTable(catalog, targetRef?.schema, targetRef?.name ?? '');
  if (target.kind !== 'sharded')
    return routeDml(a, a.select?.where ?? NO_WHERE, catalog, params, 'read');
  const t = classify(a.tables, catalog);
  const other = t.sharded.find((s) => s.index !== a.targetIndex);
  const ks = target.keyspace;
  const onlyOwner = ks.owners.length === 1 ? ks.owners[0]! : undefined;
  if (t.global.length > 0) {
    return refuse(
      `an INSERT into sharded table ${qualified(target)} that reads global table ${qualified(t.global[0]!.view)} is not supported (the global table lives on the home node only)`,
    );
  }
  if (a.onConflict?.updateColumns.includes(target.keyColumn)) {
    return refuse(
      `ON CONFLICT DO UPDATE that changes the key column "${target.keyColumn}" of sharded table ${qualified(target)} is not supported`,
    );
  }
  if (
    onlyOwner !== undefined &&
    (other === undefined || other.view.keyspace.owners.join() === onlyOwner)
  )
    return single(onlyOwner);
  if (other)
    return refuse(
      `an INSERT into sharded table ${qualified(target)} that reads sharded table ${qualified(other.view)} is not supported yet`,
    );
  if (a.source !== 'values' || a.rows === undefined) {
    return refuse(
      `INSERT into sharded table ${qualified(target)} needs a VALUES list (INSERT ... SELECT and DEFAULT VALUES are not supported yet)`,
    );
  }
  if (a.columns === undefined) {
    return refuse(
      `INSERT into sharded table ${qualified(target)} needs a column list naming its key column "${target.keyColumn}"`,
    );
  }
  const keyAt = a.columns.indexOf(target.keyColumn);
  if (keyAt < 0)
    return refuse(
      `INSERT into sharded table ${qualified(target)} must give a value for its key column "${target.keyColumn}"`,
    );
  const byNode = new Map<string, number[]>();
  for (let i = 0; i < a.rows.length; i++) {
    const v = a.rows[i]![keyAt];
    if (v === undefined)
      return refuse(`row ${i + 1} of the INSERT has no value for key column "${target.keyColumn}"`);
    const hashes = hashPinValues([v], ks.keyType, ks.seed, params);
    if (hashes === 'params') return { kind: 'params' };
    if (hashes === 'unpinnable') {
      return refuse(
        `the key column "${target.keyColumn}" of row ${i + 1} is not a constant or a parameter, so its node is unknown`,
      );
    }
    const h = hashes[0];
    // A NULL key fails the key's NOT NULL on any node; send it to a fixed one.
    const node = h === null || h === undefined ? ks.ownerOf(0n) : ks.ownerOf(h);
    let rows = byNode.get(node);
    if (!rows) byNode.set(node, (rows = []));
    rows.push(i);
  }
  if (byNode.size === 1) return single([...byNode.keys()][0]!);
  return {
    kind: 'split',
    parts: [...byNode]
      .sort((x, y) => (x[0] < y[0] ? -1 : 1))
      .map(([node, rows]) => ({ node, rows })),
  };
}

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

function routeDdl(a: DdlAnalysis, catalog: RoutingCatalog, params: ParamSource | undefined): Route {
  const all = (after = new Map<string, string>()): Route => ({
    kind: 'all',
    nodes: catalog.nodes,
    after,
    why: 'ddl',
  });
  if (a.command === 'create_table' && a.createTable !== undefined) {
    const ct = a.createTable;
    const view = lookupTable(catalog, ct.schema, ct.name);
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
      after.set(node, fenceStatement(view, catalog.fenceCheck(view, node)));
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
    ...a.tables.map((r) => lookupTable(catalog, r.schema, r.name)),
    ...a.objects
      .filter((o) => o.type === 'table' || o.type === 'foreign table')
      .map((o) => lookupTable(catalog, o.schema, o.name)),
  ];
  const distributed = views.filter((v) => v.kind !== 'global');
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

function routeMaintenance(a: MaintenanceAnalysis, catalog: RoutingCatalog): Route {
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

/** The fence a node gets on a sharded table, idempotent so CREATE TABLE IF NOT EXISTS can rerun it. */
export function fenceStatement(view: ShardedView, check: string): string {
  const table = quoteQualified(view.schema, view.name);
  const literal = `'${table.replace(/'/g, "''")}'`;
  return (
    `DO $tessera_fence$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = ${literal}::regclass AND conname = 'tessera_owns') ` +
    `THEN ALTER TABLE ${table} ADD CONSTRAINT tessera_owns CHECK (${check}) NOT VALID; END IF; END $tessera_fence$`
  );
}

function assertNever(x: never): never {
  throw new TypeError(`unhandled analysis kind ${JSON.stringify(x)}`);
}
