// Turning catalog messages into what people and tools read: plain views with lower-case enum
// names (the same words the CLI accepts), aligned text tables, and JSON with int64s as strings.
import {
  KeyType,
  NodeRole,
  NodeState,
  RangeState,
  TableKind,
  type Catalog,
  type Keyspace,
  type Node,
  type Range,
  type RouterInfo,
  type Table,
  keyTypeName as sqlKeyTypeName,
} from '@tessera/proto';

export function assertNever(x: never): never {
  throw new Error(`unexpected value ${String(x)}`);
}

export function roleName(role: NodeRole): string {
  switch (role) {
    case NodeRole.HOME:
      return 'home';
    case NodeRole.DATA:
      return 'data';
    case NodeRole.UNSPECIFIED:
      return 'unspecified';
    default:
      return assertNever(role);
  }
}

export function nodeStateName(state: NodeState): string {
  switch (state) {
    case NodeState.JOINING:
      return 'joining';
    case NodeState.ACTIVE:
      return 'active';
    case NodeState.DRAINING:
      return 'draining';
    case NodeState.REMOVED:
      return 'removed';
    case NodeState.UNSPECIFIED:
      return 'unspecified';
    default:
      return assertNever(state);
  }
}

/** The key type as the CLI prints it (keyspace's SQL name), `unspecified` rather than a throw. */
export function keyTypeName(type: KeyType): string {
  return type === KeyType.UNSPECIFIED ? 'unspecified' : sqlKeyTypeName(type);
}

export const KEY_TYPE_CHOICES = 'bigint, int, smallint, text, uuid';

export function rangeStateName(state: RangeState): string {
  switch (state) {
    case RangeState.ACTIVE:
      return 'active';
    case RangeState.FROZEN:
      return 'frozen';
    case RangeState.UNSPECIFIED:
      return 'unspecified';
    default:
      return assertNever(state);
  }
}

export function tableKindName(kind: TableKind): string {
  switch (kind) {
    case TableKind.SHARDED:
      return 'sharded';
    case TableKind.REFERENCE:
      return 'reference';
    case TableKind.GLOBAL:
      return 'global';
    case TableKind.UNSPECIFIED:
      return 'unspecified';
    default:
      return assertNever(kind);
  }
}

// Plain views: what --json prints and what the human tables are drawn from.

export interface NodeView {
  name: string;
  role: string;
  state: string;
  host: string;
  port: number;
  address: string;
  replica: string | null;
}

export function nodeView(n: Node): NodeView {
  return {
    name: n.name,
    role: roleName(n.role),
    state: nodeStateName(n.state),
    host: n.host,
    port: n.port,
    address: `${n.host}:${n.port}`,
    replica: n.replicaHost ? `${n.replicaHost}:${n.replicaPort}` : null,
  };
}

export interface RangeView {
  keyspace: string;
  lo: bigint;
  hi: bigint;
  owner: string;
  state: string;
}

export function rangeView(r: Range): RangeView {
  return {
    keyspace: r.keyspace,
    lo: r.lo,
    hi: r.hi,
    owner: r.owner,
    state: rangeStateName(r.state),
  };
}

export interface KeyspaceView {
  name: string;
  type: string;
  seed: bigint;
  ranges: RangeView[];
}

/**
 * Ranges by keyspace, then lo as a number. The catalog promises that order, but printing must not
 * depend on it: a text sort would put -4611686018427387904 before -9223372036854775808.
 */
export function sortedRanges(ranges: readonly Range[]): Range[] {
  return [...ranges].sort((a, b) =>
    a.keyspace !== b.keyspace
      ? a.keyspace < b.keyspace
        ? -1
        : 1
      : a.lo < b.lo
        ? -1
        : a.lo > b.lo
          ? 1
          : 0,
  );
}

export function keyspaceView(k: Keyspace, ranges: readonly Range[]): KeyspaceView {
  return {
    name: k.name,
    type: keyTypeName(k.keyType),
    seed: k.seed,
    ranges: sortedRanges(ranges.filter((r) => r.keyspace === k.name)).map(rangeView),
  };
}

export interface TableView {
  schema: string;
  name: string;
  kind: string;
  keyspace: string | null;
  keyColumn: string | null;
}

export function tableView(t: Table): TableView {
  const sharded = t.kind === TableKind.SHARDED;
  return {
    schema: t.schema,
    name: t.name,
    kind: tableKindName(t.kind),
    keyspace: sharded ? t.keyspace : null,
    keyColumn: sharded ? t.keyColumn : null,
  };
}

export interface RouterView {
  id: string;
  address: string;
  lastHeartbeatMs: bigint;
  ackedEpoch: bigint;
}

export function routerView(r: RouterInfo): RouterView {
  return {
    id: r.id,
    address: r.address,
    lastHeartbeatMs: r.lastHeartbeatMs,
    ackedEpoch: r.ackedEpoch,
  };
}

export interface StatusView {
  epoch: bigint;
  clusterUid: string;
  nodes: NodeView[];
  keyspaces: KeyspaceView[];
  tables: TableView[];
  routers: RouterView[];
}

export function statusView(c: Catalog, routers: readonly RouterInfo[]): StatusView {
  return {
    epoch: c.epoch,
    clusterUid: c.clusterUid,
    nodes: c.nodes.map(nodeView),
    keyspaces: c.keyspaces.map((k) => keyspaceView(k, c.ranges)),
    tables: c.tables.map(tableView),
    routers: routers.map(routerView),
  };
}

/** One JSON document, int64 values as decimal strings (JSON numbers lose precision past 2^53). */
export function toJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) +
    '\n'
  );
}

/** Columns padded to their widest cell, two spaces apart, headers in capitals. */
export function textTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n') + '\n';
}

export function nodesTable(nodes: readonly NodeView[]): string {
  if (nodes.length === 0) return '(no nodes)\n';
  return textTable(
    ['name', 'role', 'state', 'address', 'replica'],
    nodes.map((n) => [n.name, n.role, n.state, n.address, n.replica ?? '-']),
  );
}

export function keyspacesTable(keyspaces: readonly KeyspaceView[]): string {
  if (keyspaces.length === 0) return '(no keyspaces)\n';
  return textTable(
    ['name', 'type', 'seed', 'ranges'],
    keyspaces.map((k) => [k.name, k.type, k.seed.toString(), String(k.ranges.length)]),
  );
}

export function rangesTable(ranges: readonly RangeView[]): string {
  if (ranges.length === 0) return '(no ranges)\n';
  return textTable(
    ['keyspace', 'lo', 'hi', 'owner', 'state'],
    ranges.map((r) => [r.keyspace, r.lo.toString(), r.hi.toString(), r.owner, r.state]),
  );
}

export function tablesTable(tables: readonly TableView[]): string {
  if (tables.length === 0)
    return '(no tables declared; undeclared tables are global, on the home node)\n';
  return textTable(
    ['table', 'kind', 'keyspace', 'key column'],
    tables.map((t) => [`${t.schema}.${t.name}`, t.kind, t.keyspace ?? '-', t.keyColumn ?? '-']),
  );
}

export function routersTable(routers: readonly RouterView[], nowMs = Date.now()): string {
  if (routers.length === 0) return '(no routers registered)\n';
  return textTable(
    ['id', 'address', 'acked epoch', 'last heartbeat'],
    routers.map((r) => [
      r.id,
      r.address,
      r.ackedEpoch.toString(),
      ago(nowMs - Number(r.lastHeartbeatMs)),
    ]),
  );
}

function ago(ms: number): string {
  if (ms < 0) return 'just now';
  if (ms < 60_000) return `${Math.round(ms / 1000)}s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m ago`;
  return `${Math.round(ms / 3_600_000)}h ago`;
}
