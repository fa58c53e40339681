// Reads the whole catalog into one Catalog message. Callers run it inside one transaction (a
// REPEATABLE READ one, or a change transaction holding the meta row lock) so it is consistent.
import type { KeyTypeName } from '@tessera/keyspace';
import {
  create,
  parseKeyType,
  CatalogSchema,
  RangeSchema,
  type Catalog,
  type Range,
} from '@tessera/proto';
import type pg from 'pg';
import {
  haModeFromText,
  replicaStateFromText,
  type HaModeText,
  type ReplicaStateText,
  nodeRoleFromText,
  nodeStateFromText,
  rangeStateFromText,
  tableKindFromText,
  type NodeRoleText,
  type NodeStateText,
  type RangeStateText,
  type TableKindText,
} from './enums.js';

interface MetaRow {
  epoch: string;
  cluster_uid: string;
}
interface NodeRow {
  name: string;
  host: string;
  port: number;
  role: NodeRoleText;
  state: NodeStateText;
  failing_over: boolean;
  failover_target: string;
  degraded: boolean;
  degraded_reason: string;
  degraded_ms: string | null;
  ha_mode: HaModeText;
}
interface ReplicaRow {
  node: string;
  host: string;
  port: number;
  name: string;
  state: ReplicaStateText;
}
interface KeyspaceRow {
  name: string;
  key_type: KeyTypeName;
  seed: string;
}
export interface RangeRow {
  keyspace: string;
  lo: string;
  hi: string;
  owner: string;
  state: RangeStateText;
}
interface MoveRow {
  keyspace: string;
  lo: string;
  hi: string;
  job_id: string;
  source: string;
  target: string;
}
interface TableRow {
  schema_name: string;
  name: string;
  kind: TableKindText;
  keyspace: string | null;
  key_column: string | null;
}

// Sorting uses "C" collation so the order does not depend on the database's locale.
const NODES = `select name, host, port, role, state, failing_over, failover_target, degraded, degraded_reason,
                      (extract(epoch from degraded_since) * 1000)::int8::text as degraded_ms, ha_mode
                 from tessera.node order by name collate "C"`;
// Sync replicas first, then by address, so `replicas[0]` is the one failover would pick first.
const REPLICAS = `select node, host, port, name, state from tessera.replica
                    order by node collate "C", state <> 'sync', host collate "C", port`;
const KEYSPACES = `select name, key_type, seed::text from tessera.keyspace order by name collate "C"`;
// Qualified in ORDER BY: a bare \`lo\` would sort by the text output column.
const RANGES = `select r.keyspace, r.lo::text, r.hi::text, r.owner, r.state from tessera.range r
                  order by r.keyspace collate "C", r.lo`;
const MOVES = `select m.keyspace, m.lo::text, m.hi::text, m.job_id::text, m.source, m.target
                 from tessera.range_move m order by m.keyspace collate "C", m.lo`;
const TABLES = `select schema_name, name, kind, keyspace, key_column from tessera.dist_table
                  order by schema_name collate "C", name collate "C"`;

export async function readMeta(
  client: pg.ClientBase,
): Promise<{ epoch: bigint; clusterUid: string }> {
  const { rows } = await client.query<MetaRow>('select epoch::text, cluster_uid from tessera.meta');
  const row = rows[0];
  if (!row) throw new Error('the catalog has no tessera.meta row; was it migrated?');
  return { epoch: BigInt(row.epoch), clusterUid: row.cluster_uid };
}

export async function readCatalog(client: pg.ClientBase): Promise<Catalog> {
  const meta = await readMeta(client);
  const nodes = await client.query<NodeRow>(NODES);
  const replicas = await client.query<ReplicaRow>(REPLICAS);
  const keyspaces = await client.query<KeyspaceRow>(KEYSPACES);
  const ranges = await client.query<RangeRow>(RANGES);
  const tables = await client.query<TableRow>(TABLES);
  const moves = await client.query<MoveRow>(MOVES);
  return create(CatalogSchema, {
    epoch: meta.epoch,
    clusterUid: meta.clusterUid,
    nodes: nodes.rows.map((n) => {
      const mine = replicas.rows.filter((r) => r.node === n.name);
      const first = mine.find((r) => r.state !== 'fenced');
      return {
        name: n.name,
        host: n.host,
        port: n.port,
        role: nodeRoleFromText(n.role),
        state: nodeStateFromText(n.state),
        replicaHost: first?.host ?? '',
        replicaPort: first?.port ?? 0,
        replicas: mine.map((r) => ({
          host: r.host,
          port: r.port,
          name: r.name,
          state: replicaStateFromText(r.state),
        })),
        failingOver: n.failing_over,
        failoverTarget: n.failover_target,
        degraded: n.degraded,
        degradedReason: n.degraded_reason,
        degradedSinceMs: n.degraded_ms === null ? 0n : BigInt(n.degraded_ms),
        haMode: haModeFromText(n.ha_mode),
      };
    }),
    keyspaces: keyspaces.rows.map((k) => ({
      name: k.name,
      keyType: parseKeyType(k.key_type),
      seed: BigInt(k.seed),
    })),
    ranges: ranges.rows.map(rangeFromRow),
    tables: tables.rows.map((t) => ({
      schema: t.schema_name,
      name: t.name,
      kind: tableKindFromText(t.kind),
      keyspace: t.keyspace ?? '',
      keyColumn: t.key_column ?? '',
    })),
    moves: moves.rows.map((m) => ({
      keyspace: m.keyspace,
      lo: BigInt(m.lo),
      hi: BigInt(m.hi),
      jobId: BigInt(m.job_id),
      source: m.source,
      target: m.target,
    })),
  });
}

export function rangeFromRow(r: RangeRow): Range {
  return create(RangeSchema, {
    keyspace: r.keyspace,
    lo: BigInt(r.lo),
    hi: BigInt(r.hi),
    owner: r.owner,
    state: rangeStateFromText(r.state),
  });
}

/** The ranges of one keyspace, sorted by lo, as the change transaction sees them. */
export async function readRanges(client: pg.ClientBase, keyspace: string): Promise<Range[]> {
  const { rows } = await client.query<RangeRow>(
    'select r.keyspace, r.lo::text, r.hi::text, r.owner, r.state from tessera.range r where r.keyspace = $1 order by r.lo',
    [keyspace],
  );
  return rows.map(rangeFromRow);
}
