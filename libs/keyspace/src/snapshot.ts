// One catalog epoch as an immutable, indexed view: validated whole when built (a catalog that
// breaks an invariant is refused, never half-used) and swapped whole by its readers.
import { clone, CatalogSchema, NodeRole, NodeState, RangeState, TableKind } from '@tessera/proto';
import type { Catalog, Keyspace, Node, Range, Table } from '@tessera/proto';
import { hashKeyText } from '@tessera/pg-hash';
import { CatalogInvalidError, UnknownKeyspaceError } from './errors.js';
import { keyTypeName, type KeyTypeName } from './key-type.js';
import { RangeMap } from './range-map.js';

/** One keyspace of a snapshot with what routing needs at hand. */
export interface KeyspaceView {
  readonly keyspace: Keyspace;
  readonly keyType: KeyTypeName;
  readonly seed: bigint;
  readonly ranges: RangeMap<Range>;
}

export interface CatalogSnapshot {
  readonly epoch: bigint;
  readonly clusterUid: string;
  readonly nodes: ReadonlyMap<string, Node>;
  /** The one node with role home: global tables and statements without tables go there. */
  readonly home: Node;
  readonly keyspaces: ReadonlyMap<string, KeyspaceView>;
  /** Declared tables by "schema.name". */
  readonly tables: ReadonlyMap<string, Table>;
  /** The declared table, or undefined: an undeclared table is global. */
  tableOf(schema: string, name: string): Table | undefined;
  /** The range holding a key given in Postgres text form; KeyValueError for a malformed key. */
  rangeOfKey(keyspace: string, keyText: string): Range;
  /** The node owning a key given in Postgres text form; KeyValueError for a malformed key. */
  ownerOfKey(keyspace: string, keyText: string): Node;
  /** The ranges a node owns, by keyspace (ordered by lo); empty for a node owning nothing. */
  ownedRanges(nodeName: string): ReadonlyMap<string, readonly Range[]>;
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

const EMPTY: ReadonlyMap<string, readonly Range[]> = frozenMap([]);

function tableKey(schema: string, name: string): string {
  return `${schema}.${name}`;
}

function checkNodes(nodes: readonly Node[]): { byName: Map<string, Node>; home: Node } {
  const byName = new Map<string, Node>();
  const homes: Node[] = [];
  for (const node of nodes) {
    if (node.name === '') throw new CatalogInvalidError('the catalog has a node without a name');
    if (byName.has(node.name))
      throw new CatalogInvalidError(`node "${node.name}" appears twice in the catalog`);
    if (node.role === NodeRole.HOME) homes.push(node);
    else if (node.role !== NodeRole.DATA)
      throw new CatalogInvalidError(`node "${node.name}" has no role (home or data)`);
    if (node.state === NodeState.UNSPECIFIED)
      throw new CatalogInvalidError(`node "${node.name}" has no state`);
    byName.set(node.name, node);
  }
  const home = homes[0];
  if (home === undefined) throw new CatalogInvalidError('the catalog has no home node');
  if (homes.length > 1) {
    throw new CatalogInvalidError(
      `the catalog has ${homes.length} home nodes (${homes.map((n) => n.name).join(', ')}); exactly one is required`,
    );
  }
  if (home.state === NodeState.REMOVED)
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
  if (owner.state === NodeState.REMOVED) {
    throw new CatalogInvalidError(`${what} is owned by node "${range.owner}", which is removed`);
  }
  if (range.state !== RangeState.ACTIVE && range.state !== RangeState.FROZEN) {
    throw new CatalogInvalidError(`${what} has no state (active or frozen)`);
  }
}

function checkTable(table: Table, keyspaces: ReadonlySet<string>): void {
  const what = `table "${tableKey(table.schema, table.name)}"`;
  if (table.schema === '' || table.name === '') {
    throw new CatalogInvalidError(`${what} needs both a schema and a name`);
  }
  switch (table.kind) {
    case TableKind.SHARDED:
      if (table.keyspace === '') throw new CatalogInvalidError(`sharded ${what} has no keyspace`);
      if (!keyspaces.has(table.keyspace)) {
        throw new CatalogInvalidError(`sharded ${what} names unknown keyspace "${table.keyspace}"`);
      }
      if (table.keyColumn === '')
        throw new CatalogInvalidError(`sharded ${what} has no key column`);
      return;
    case TableKind.REFERENCE:
    case TableKind.GLOBAL:
      if (table.keyspace !== '' || table.keyColumn !== '') {
        const kind = table.kind === TableKind.REFERENCE ? 'reference' : 'global';
        throw new CatalogInvalidError(
          `${kind} ${what} has a keyspace or key column, which only sharded tables have`,
        );
      }
      return;
    default:
      throw new CatalogInvalidError(`${what} has no kind (sharded, reference or global)`);
  }
}

/**
 * Validates `catalog` whole and indexes it. Throws CatalogInvalidError, naming the first
 * problem, for anything DESIGN.md section 2 forbids. The snapshot holds its own frozen copy.
 */
export function buildSnapshot(catalog: Catalog): CatalogSnapshot {
  const copy = clone(CatalogSchema, catalog);
  const { byName: nodes, home } = checkNodes(copy.nodes);

  const keyspaceMessages = new Map<string, Keyspace>();
  for (const ks of copy.keyspaces) {
    if (ks.name === '') throw new CatalogInvalidError('the catalog has a keyspace without a name');
    if (keyspaceMessages.has(ks.name))
      throw new CatalogInvalidError(`keyspace "${ks.name}" appears twice in the catalog`);
    keyspaceMessages.set(ks.name, ks);
  }
  const keyspaceNames: ReadonlySet<string> = new Set(keyspaceMessages.keys());

  const rangesByKeyspace = new Map<string, Range[]>();
  for (const name of keyspaceNames) rangesByKeyspace.set(name, []);
  for (const range of copy.ranges) {
    checkRange(range, keyspaceNames, nodes);
    rangesByKeyspace.get(range.keyspace)!.push(range);
  }

  const keyspaces = new Map<string, KeyspaceView>();
  for (const [name, ks] of keyspaceMessages) {
    let keyType: KeyTypeName;
    try {
      keyType = keyTypeName(ks.keyType);
    } catch (e) {
      throw new CatalogInvalidError(`keyspace "${name}": ${(e as Error).message}`);
    }
    const ranges = new RangeMap(name, rangesByKeyspace.get(name)!);
    keyspaces.set(name, Object.freeze({ keyspace: ks, keyType, seed: ks.seed, ranges }));
  }

  const tables = new Map<string, Table>();
  for (const table of copy.tables) {
    checkTable(table, keyspaceNames);
    const key = tableKey(table.schema, table.name);
    if (tables.has(key))
      throw new CatalogInvalidError(`table "${key}" appears twice in the catalog`);
    tables.set(key, table);
  }

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
  const ownedFrozen = new Map<string, ReadonlyMap<string, readonly Range[]>>();
  for (const [node, byKeyspace] of owned) {
    ownedFrozen.set(
      node,
      frozenMap([...byKeyspace].map(([ks, list]) => [ks, Object.freeze(list)] as const)),
    );
  }

  // Everything reachable from the snapshot is frozen; the catalog copy is private to it.
  for (const message of [...copy.nodes, ...copy.keyspaces, ...copy.ranges, ...copy.tables])
    Object.freeze(message);

  const rangeOfKey = (keyspace: string, keyText: string): Range => {
    const view = keyspaces.get(keyspace);
    if (view === undefined) throw new UnknownKeyspaceError(keyspace);
    return view.ranges.ownerOf(hashKeyText(view.keyType, keyText, view.seed));
  };

  return Object.freeze({
    epoch: copy.epoch,
    clusterUid: copy.clusterUid,
    nodes: frozenMap(nodes),
    home,
    keyspaces: frozenMap(keyspaces),
    tables: frozenMap(tables),
    tableOf: (schema: string, name: string) => tables.get(tableKey(schema, name)),
    rangeOfKey,
    // Every owner was checked against the nodes above.
    ownerOfKey: (keyspace: string, keyText: string) =>
      nodes.get(rangeOfKey(keyspace, keyText).owner)!,
    ownedRanges: (nodeName: string) => ownedFrozen.get(nodeName) ?? EMPTY,
  });
}
