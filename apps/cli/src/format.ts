// Turning catalog messages into what people and tools read: plain views with lower-case enum
// names (the same words the CLI accepts), aligned text tables, and JSON with int64s as strings.
import {
  Durability,
  HaMode,
  KeyType,
  NodeRole,
  NodeState,
  RangeState,
  ReplicaState,
  TableKind,
  type AgentStatus,
  type Catalog,
  type ClusterHealth,
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

export function replicaStateName(state: ReplicaState): string {
  switch (state) {
    case ReplicaState.CATCHING_UP:
      return 'catching up';
    case ReplicaState.SYNC:
      return 'sync';
    case ReplicaState.FENCED:
      return 'fenced';
    case ReplicaState.REJOINING:
      return 'rejoining';
    case ReplicaState.UNSPECIFIED:
      return 'unspecified';
    default:
      return assertNever(state);
  }
}

export function haModeName(mode: HaMode): string {
  switch (mode) {
    case HaMode.UNSPECIFIED:
    case HaMode.NATIVE:
      return 'native';
    case HaMode.PATRONI:
      return 'patroni';
    case HaMode.CNPG:
      return 'cnpg';
    default:
      return assertNever(mode);
  }
}

export const HA_MODE_CHOICES = 'native, patroni, cnpg';

export function durabilityName(d: Durability): string {
  switch (d) {
    case Durability.REQUIRED:
      return 'required';
    case Durability.PREFERRED:
      return 'preferred';
    case Durability.UNSPECIFIED:
      return 'unspecified';
    default:
      return assertNever(d);
  }
}

// Plain views: what --json prints and what the human tables are drawn from.

export interface ReplicaView {
  address: string;
  name: string;
  /** sync (in the durable sync set), catching up, fenced (a former primary), rejoining. */
  state: string;
  /** As the primary's pg_stat_replication shows it (null when it does not stream). */
  streaming: { state: string; syncState: string; flushLagBytes: bigint; replyAgeMs: bigint } | null;
}

export interface NodeView {
  name: string;
  role: string;
  state: string;
  host: string;
  port: number;
  address: string;
  replica: string | null;
  replicas: ReplicaView[];
  ha: string;
  failingOver: boolean;
  degraded: boolean;
  degradedReason: string | null;
  /** From the coordinator's failover engine (null when it was not asked). */
  durability: string | null;
  leaseRemainingMs: bigint | null;
  failover: string | null;
  lastFailover: string | null;
}

export function nodeView(n: Node, health?: ClusterHealth): NodeView {
  const primary = health?.agents.find(
    (a) => a.report?.node === n.name && a.report.address === `${n.host}:${n.port}`,
  )?.report;
  const h = health?.nodes.find((x) => x.node === n.name);
  return {
    name: n.name,
    role: roleName(n.role),
    state: nodeStateName(n.state),
    host: n.host,
    port: n.port,
    address: `${n.host}:${n.port}`,
    replica: n.replicaHost ? `${n.replicaHost}:${n.replicaPort}` : null,
    replicas: n.replicas.map((r) => {
      const row = primary?.standbys.find((s) => s.applicationName === r.name);
      return {
        address: `${r.host}:${r.port}`,
        name: r.name,
        state: replicaStateName(r.state),
        streaming: row
          ? {
              state: row.state,
              syncState: row.syncState,
              flushLagBytes: row.flushLagBytes,
              replyAgeMs: row.replyAgeMs,
            }
          : null,
      };
    }),
    ha: haModeName(n.haMode),
    failingOver: n.failingOver,
    degraded: n.degraded,
    degradedReason: n.degraded ? n.degradedReason : null,
    durability: h ? durabilityName(h.durability) : null,
    leaseRemainingMs: h ? h.leaseRemainingMs : null,
    failover: h && h.failover !== '' ? h.failover : null,
    lastFailover: h && h.lastFailover !== '' ? h.lastFailover : null,
  };
}

export interface AgentView {
  node: string;
  address: string;
  /** primary, standby, or down (not reachable). */
  role: string;
  reachable: boolean;
  fenced: boolean;
  lsn: string;
  lagBytes: bigint;
  connections: number;
  diskFreeBytes: bigint;
  mode: string;
  leaseRemainingMs: bigint;
  error: string | null;
  ageMs: bigint;
}

export function agentView(a: AgentStatus): AgentView {
  const r = a.report;
  return {
    node: r?.node ?? '',
    address: r?.address ?? '',
    role: !r?.reachable ? 'down' : r.inRecovery ? 'standby' : 'primary',
    reachable: r?.reachable ?? false,
    fenced: r?.fenced ?? false,
    lsn: r?.lsn ?? '',
    lagBytes: r?.replicationLagBytes ?? 0n,
    connections: r?.connections ?? 0,
    diskFreeBytes: r?.diskFreeBytes ?? -1n,
    mode: r?.mode ?? '',
    leaseRemainingMs: r?.leaseRemainingMs ?? 0n,
    error: r && r.error !== '' ? r.error : null,
    ageMs: a.ageMs,
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
  /** Each agent's last report (empty when the coordinator could not be asked). */
  agents: AgentView[];
  keyspaces: KeyspaceView[];
  tables: TableView[];
  routers: RouterView[];
}

export function statusView(
  c: Catalog,
  routers: readonly RouterInfo[],
  health?: ClusterHealth,
): StatusView {
  return {
    epoch: c.epoch,
    clusterUid: c.clusterUid,
    nodes: c.nodes.map((n) => nodeView(n, health)),
    agents: (health?.agents ?? [])
      .map(agentView)
      .sort((a, b) => (a.node + a.address < b.node + b.address ? -1 : 1)),
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

/** Per node: who decides failovers, the primary, each replica's state and lag, degradation. */
export function replicationTable(nodes: readonly NodeView[]): string {
  const rows: string[][] = [];
  for (const n of nodes) {
    const flags = [
      n.failingOver ? 'FAILING OVER' : '',
      n.degraded ? `DEGRADED: ${n.degradedReason ?? ''}` : '',
      n.failover ?? '',
    ].filter((x) => x !== '');
    const status = flags.join('; ') || (n.replicas.length === 0 ? 'no replica' : 'ok');
    rows.push([n.name, n.ha, n.durability ?? '-', `${n.address} (primary)`, '-', '-', status]);
    for (const r of n.replicas)
      rows.push([
        '',
        '',
        '',
        r.address,
        r.state,
        r.streaming
          ? `${r.streaming.state}/${r.streaming.syncState}, ${bytes(r.streaming.flushLagBytes)} behind`
          : 'not streaming',
        '',
      ]);
  }
  if (rows.length === 0) return '(no nodes)\n';
  return textTable(
    ['node', 'ha', 'durability', 'instance', 'replica state', 'replication', 'status'],
    rows,
  );
}

/** Each agent's last report. */
export function agentsTable(agents: readonly AgentView[]): string {
  if (agents.length === 0) return '(no agent reports)\n';
  return textTable(
    ['node', 'instance', 'role', 'lsn', 'lag', 'conns', 'disk free', 'lease', 'report'],
    agents.map((a) => [
      a.node,
      a.address,
      `${a.role}${a.fenced ? ' (fenced)' : ''}${a.mode !== 'native' && a.mode !== '' ? ` [${a.mode}]` : ''}`,
      a.lsn || '-',
      bytes(a.lagBytes),
      String(a.connections),
      a.diskFreeBytes < 0n ? '-' : bytes(a.diskFreeBytes),
      a.leaseRemainingMs > 0n ? `${(Number(a.leaseRemainingMs) / 1000).toFixed(1)}s` : '-',
      `${ago(Number(a.ageMs))}${a.error ? ` (${a.error})` : ''}`,
    ]),
  );
}

export function bytes(n: bigint): string {
  const v = Number(n);
  if (v < 0) return '-';
  if (v < 1024) return `${v} B`;
  if (v < 1024 ** 2) return `${(v / 1024).toFixed(1)} kB`;
  if (v < 1024 ** 3) return `${(v / 1024 ** 2).toFixed(1)} MB`;
  return `${(v / 1024 ** 3).toFixed(1)} GB`;
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
