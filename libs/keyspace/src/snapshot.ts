// One catalog epoch as an immutable, indexed view: validated whole when built (a catalog that
// breaks an invariant is refused, never half-used), read by routing on every statement, swapped
// whole by its readers. The one snapshot a router builds per epoch.
import type { Catalog, Keyspace, Node, Range, RangeMove, Table } from './catalog.js';
import { movesByKeyspace } from './moves.js';
import { CatalogInvalidError, UnknownKeyspaceError } from './errors.js';
import type { KeyTypeName } from './key-type.js';
import { RangeMap } from './range-map.js';
import { hashKeyText } from '@tessera/pg-hash';

/** One keyspace with what routing needs at hand. */
export interface KeyspaceView {
  readonly name: string;
  readonly keyType: KeyTypeName;
  readonly seed: bigint;
  readonly ranges: RangeMap<Range>;
  /** Every node owning at least one range, sorted. */
  readonly owners: readonly string[];
  /** Some range of the keyspace is frozen (a move's cutover): writes to it are held. */
  readonly hasFrozen: boolean;
  /** Name of the node owning the range that holds `hash`. */
  ownerOf(hash: bigint): string;
  /** The range that holds `hash`. */
  rangeOf(hash: bigint): Range;
}

export interface ShardedTableView {
  readonly kind: 'sharded';
  readonly schema: string;
  readonly name: string;
  readonly keyspace: KeyspaceView;
  readonly keyColumn: string;
}

/** A declared table as routing sees it: sharded ones carry their keyspace. */
export type TableView =
  | ShardedTableView
  | { readonly kind: 'reference'; readonly schema: string; readonly name: string }
  | { readonly kind: 'global'; readonly schema: string; readonly name: string };

export interface Snapshot {
  readonly epoch: bigint;
  readonly clusterUid: string;
  /** The home node's name: global tables and statements without tables go there. */
  readonly home: string;
  /** Nodes that hold copies of distributed tables (every node not removed), sorted by name. */
  readonly nodes: readonly string[];
  /** Any node of the catalog, removed ones included. */
  node(name: string): Node | undefined;
  /** Where a node that is not removed listens (its primary). */
  address(name: string): { readonly host: string; readonly port: number } | undefined;
  keyspace(name: string): KeyspaceView | undefined;
  /** The declared table, or undefined: an undeclared table is global. */
  table(schema: string, name: string): TableView | undefined;
  /** Every declared table (name resolution asks nodes about these names). */
  readonly tables: readonly TableView[];
  /** The range of `keyspace` holding `hash`; UnknownKeyspaceError for a keyspace it lacks. */
  rangeOf(keyspace: string, hash: bigint): Range;
  ownerOf(keyspace: string, hash: bigint): string;
  /** The node owning a key given in Postgres text form; KeyValueError for a malformed key. */
  ownerOfKey(keyspace: string, keyText: string): string;
  /** Whether the range holding `hash` is frozen. */
  isFrozen(keyspace: string, hash: bigint): boolean;
  /** Some range of some keyspace is frozen: the one check a statement pays when none is. */
  readonly hasFrozen: boolean;
  /** Nodes whose primary is being replaced (Node.failingOver), usually none. */
  readonly failingOver: ReadonlySet<string>;
  /** The ranges a node owns, by keyspace (ordered by lo); empty for a node owning nothing. */
  ownedRanges(node: string): ReadonlyMap<string, readonly Range[]>;
  /** Moves in progress, by keyspace (DDL on their tables is refused: moves.ts). */
  readonly moves: ReadonlyMap<string, readonly RangeMove[]>;
}

/** A Map that refuses changes even through a cast, so a snapshot cannot drift after it is built. */
function frozenMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map(entries);
  const refuse = (): never => {
    throw new TypeError('a catalog snapshot is immutable');
  };
  Object.defineProperties(map, {
    set: { value: refuse },
    delete: { value: refuse },
    clear: { value: refuse },
  });
  return Object.freeze(map);
}

function frozenSet<V>(values: Iterable<V>): ReadonlySet<V> {
  const set = new Set(values);
  const refuse = (): never => {
    throw new TypeError('a catalog snapshot is immutable');
  };
  Object.defineProperties(set, {
    add: { value: refuse },
    delete: { value: refuse },
    clear: { value: refuse },
  });
  return Object.freeze(set);
}

const EMPTY: ReadonlyMap<string, readonly Range[]> = frozenMap([]);

const tableKey = (schema: string, name: string): string => `${schema}.${name}`;

function checkNodes(nodes: readonly Node[]): { byName: Map<string, Node>; home: Node } {
  const byName = new Map<string, Node>();
  const homes: Node[] = [];
  for (const node of nodes) {
    if (node.name === '') throw new CatalogInvalidError('the catalog has a node without a name');
    if (byName.has(node.name))
      throw new CatalogInvalidError(`node "${node.name}" appears twice in the catalog`);
    if (node.role === 'home') homes.push(node);
    byName.set(node.name, node);
  }
  const home = homes[0];
  if (home === undefined) throw new CatalogInvalidError('the catalog has no home node');
  if (homes.length > 1) {
    throw new CatalogInvalidError(
      `the catalog has ${homes.length} home nodes (${homes.map((n) => n.name).join(', ')}); exactly one is required`,
    );
  }
  if (home.state === 'removed')
    throw new CatalogInvalidError(`the home node "${home.name}" is removed`);
  return { byName, home };
}

function checkRange(
  range: Range,
  keyspaces: ReadonlySet<string>,
  nodes: ReadonlyMap<string, Node>,
): void {
  const what = `range [${range.lo}, ${range.hi}] of keyspace "${range.keyspace}"`;
  if (!keyspaces.has(range.keyspace))
    throw new CatalogInvalidError(`${what} belongs to no declared keyspace`);
  const owner = nodes.get(range.owner);
  if (owner === undefined)
    throw new CatalogInvalidError(`${what} is owned by unknown node "${range.owner}"`);
  if (owner.state === 'removed')
    throw new CatalogInvalidError(`${what} is owned by node "${range.owner}", which is removed`);
}

function checkTable(table: Table, keyspaces: ReadonlySet<string>): void {
  const what = `table "${tableKey(table.schema, table.name)}"`;
  if (table.schema === '' || table.name === '')
    throw new CatalogInvalidError(`${what} needs both a schema and a name`);
  if (table.kind !== 'sharded') return;
  if (table.keyspace === '') throw new CatalogInvalidError(`sharded ${what} has no keyspace`);
  if (!keyspaces.has(table.keyspace))
    throw new CatalogInvalidError(`sharded ${what} names unknown keyspace "${table.keyspace}"`);
  if (table.keyColumn === '') throw new CatalogInvalidError(`sharded ${what} has no key column`);
}

/** Copies `x` and freezes the copy: the snapshot shares nothing the caller can change. */
const frozenCopy = <T extends object>(x: T): T => Object.freeze({ ...x });

function keyspaceView(ks: Keyspace, ranges: readonly Range[]): KeyspaceView {
  const map = new RangeMap(ks.name, ranges);
  return Object.freeze({
    name: ks.name,
    keyType: ks.keyType,
    seed: ks.seed,
    ranges: map,
    owners: Object.freeze([...new Set(map.ranges.map((r) => r.owner))].sort()),
    hasFrozen: map.ranges.some((r) => r.state === 'frozen'),
    ownerOf: (hash: bigint) => map.ownerOf(hash).owner,
    rangeOf: (hash: bigint) => map.ownerOf(hash),
  });
}

function indexKeyspaces(
  catalog: Catalog,
  nodes: ReadonlyMap<string, Node>,
): Map<string, KeyspaceView> {
  const defs = new Map<string, Keyspace>();
  for (const ks of catalog.keyspaces) {
    if (ks.name === '') throw new CatalogInvalidError('the catalog has a keyspace without a name');
    if (defs.has(ks.name))
      throw new CatalogInvalidError(`keyspace "${ks.name}" appears twice in the catalog`);
    defs.set(ks.name, ks);
  }
  const names: ReadonlySet<string> = new Set(defs.keys());
  const rangesOf = new Map<string, Range[]>([...names].map((n) => [n, []]));
  for (const range of catalog.ranges) {
    checkRange(range, names, nodes);
    rangesOf.get(range.keyspace)!.push(frozenCopy(range));
  }
  const views = new Map<string, KeyspaceView>();
  for (const [name, ks] of defs) views.set(name, keyspaceView(ks, rangesOf.get(name)!));
  return views;
}

/**
 * The catalog's tables in its order, and by schema, then name: the two are never joined into one
 * string, so `"a.b".c` and `a."b.c"` are two tables.
 */
function indexTables(
  catalog: Catalog,
  keyspaces: ReadonlyMap<string, KeyspaceView>,
): { list: TableView[]; bySchema: Map<string, Map<string, TableView>> } {
  const names: ReadonlySet<string> = new Set(keyspaces.keys());
  const list: TableView[] = [];
  const bySchema = new Map<string, Map<string, TableView>>();
  for (const table of catalog.tables) {
    checkTable(table, names);
    let inSchema = bySchema.get(table.schema);
    if (inSchema === undefined) bySchema.set(table.schema, (inSchema = new Map()));
    if (inSchema.has(table.name))
      throw new CatalogInvalidError(
        `table "${tableKey(table.schema, table.name)}" appears twice in the catalog`,
      );
    const view: TableView =
      table.kind === 'sharded'
        ? Object.freeze({
            kind: 'sharded',
            schema: table.schema,
            name: table.name,
            keyspace: keyspaces.get(table.keyspace)!,
            keyColumn: table.keyColumn,
          })
        : frozenCopy(table);
    inSchema.set(table.name, view);
    list.push(view);
  }
  return { list, bySchema };
}

function indexOwned(
  keyspaces: ReadonlyMap<string, KeyspaceView>,
): Map<string, ReadonlyMap<string, readonly Range[]>> {
  const owned = new Map<string, Map<string, Range[]>>();
  for (const [name, view] of keyspaces) {
    for (const range of view.ranges.ranges) {
      let byKeyspace = owned.get(range.owner);
      if (byKeyspace === undefined) owned.set(range.owner, (byKeyspace = new Map()));
      let list = byKeyspace.get(name);
      if (list === undefined) byKeyspace.set(name, (list = []));
      list.push(range);
    }
  }
  const out = new Map<string, ReadonlyMap<string, readonly Range[]>>();
  for (const [node, byKeyspace] of owned)
    out.set(node, frozenMap([...byKeyspace].map(([ks, l]) => [ks, Object.freeze(l)] as const)));
  return out;
}

/**
 * Validates `catalog` whole and indexes it. Throws CatalogInvalidError, naming the first
 * problem, for anything DESIGN.md section 2 forbids. The snapshot holds its own frozen copies.
 */
export function buildSnapshot(catalog: Catalog): Snapshot {
  const { byName, home } = checkNodes(catalog.nodes.map(frozenCopy));
  const keyspaces = indexKeyspaces(catalog, byName);
  const tables = indexTables(catalog, keyspaces);
  const owned = indexOwned(keyspaces);
  const live = [...byName.values()].filter((n) => n.state !== 'removed');
  const addresses = new Map(
    live.map((n) => [n.name, Object.freeze({ host: n.host, port: n.port })]),
  );
  const keyspaceOf = (name: string): KeyspaceView => {
    const view = keyspaces.get(name);
    if (view === undefined) throw new UnknownKeyspaceError(name);
    return view;
  };
  return Object.freeze({
    epoch: catalog.epoch,
    clusterUid: catalog.clusterUid,
    home: home.name,
    nodes: Object.freeze(live.map((n) => n.name).sort()),
    node: (name: string) => byName.get(name),
    tables: Object.freeze(tables.list),
    address: (name: string) => addresses.get(name),
    keyspace: (name: string) => keyspaces.get(name),
    // By schema, then name: asked several times per statement, with no string to build or hash.
    table: (schema: string, name: string) => tables.bySchema.get(schema)?.get(name),
    rangeOf: (keyspace: string, hash: bigint) => keyspaceOf(keyspace).rangeOf(hash),
    ownerOf: (keyspace: string, hash: bigint) => keyspaceOf(keyspace).ownerOf(hash),
    ownerOfKey: (keyspace: string, keyText: string) => {
      const k = keyspaceOf(keyspace);
      return k.ownerOf(hashKeyText(k.keyType, keyText, k.seed));
    },
    isFrozen: (keyspace: string, hash: bigint) =>
      keyspaceOf(keyspace).rangeOf(hash).state === 'frozen',
    hasFrozen: [...keyspaces.values()].some((k) => k.hasFrozen),
    failingOver: frozenSet(live.filter((n) => n.failingOver === true).map((n) => n.name)),
    ownedRanges: (node: string) => owned.get(node) ?? EMPTY,
    moves: movesByKeyspace(catalog),
  });
}
