// What the move code reads from a catalog snapshot: nodes by name, a keyspace and its range,
// the sharded tables of a keyspace, the ranges a node owns.
import type { HashRange, KeyTypeName } from '@tessera/keyspace';
import {
  NodeState,
  RangeState,
  TableKind,
  keyTypeName,
  type Catalog,
  type Range,
} from '@tessera/proto';
import { JobFailed } from '../errors.js';
import type { NodeAddr } from '../nodes/sessions.js';

export function nodeAddr(catalog: Catalog, name: string): NodeAddr {
  const n = catalog.nodes.find((x) => x.name === name);
  if (!n) throw new JobFailed(`no node named ${name} in the catalog`);
  return { name: n.name, host: n.host, port: n.port };
}

export function isActiveNode(catalog: Catalog, name: string): boolean {
  return catalog.nodes.find((x) => x.name === name)?.state === NodeState.ACTIVE;
}

export interface KeyspaceInfo {
  name: string;
  keyType: KeyTypeName;
  seed: bigint;
}

export function keyspaceInfo(catalog: Catalog, name: string): KeyspaceInfo {
  const ks = catalog.keyspaces.find((k) => k.name === name);
  if (!ks) throw new JobFailed(`no keyspace named ${name}`);
  return { name, keyType: keyTypeName(ks.keyType), seed: ks.seed };
}

/** The range of `keyspace` that starts at `lo`, if any. */
export function rangeAt(catalog: Catalog, keyspace: string, lo: bigint): Range | undefined {
  return catalog.ranges.find((r) => r.keyspace === keyspace && r.lo === lo);
}

export function isFrozen(r: Range): boolean {
  return r.state === RangeState.FROZEN;
}

export interface ShardedTable {
  schema: string;
  name: string;
  keyColumn: string;
}

export function shardedTables(catalog: Catalog, keyspace: string): ShardedTable[] {
  return catalog.tables
    .filter((t) => t.kind === TableKind.SHARDED && t.keyspace === keyspace)
    .map((t) => ({ schema: t.schema, name: t.name, keyColumn: t.keyColumn }));
}

export function referenceTables(catalog: Catalog): { schema: string; name: string }[] {
  return catalog.tables
    .filter((t) => t.kind === TableKind.REFERENCE)
    .map((t) => ({ schema: t.schema, name: t.name }));
}

/** The ranges of `keyspace` the catalog says `node` owns. */
export function ownedRanges(catalog: Catalog, keyspace: string, node: string): HashRange[] {
  return catalog.ranges
    .filter((r) => r.keyspace === keyspace && r.owner === node)
    .map((r) => ({ lo: r.lo, hi: r.hi }));
}

/** `ranges` without `cut` (cut is one of them, exactly). */
export function without(ranges: readonly HashRange[], cut: HashRange): HashRange[] {
  return ranges.filter((r) => !(r.lo === cut.lo && r.hi === cut.hi));
}

/** `ranges` with `add` (once). */
export function withRange(ranges: readonly HashRange[], add: HashRange): HashRange[] {
  return ranges.some((r) => r.lo === add.lo && r.hi === add.hi) ? [...ranges] : [...ranges, add];
}
