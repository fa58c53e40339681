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
  replica_host: string;
  replica_port: number;
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
interface TableRow {
  schema_name: string;
  name: string;
  kind: TableKindText;
  keyspace: string | null;
  key_column: string | null;
}

// Sorting uses "C" collation so the order does not depend on the database's locale.
const NODES = `select name, host, port, role, state, replica_host, replica_port
                 from tessera.node order by name collate "C"`;
const KEYSPACES = `select name, key_type, seed::text from tessera.keyspace order by name collate "C"`;
// Qualified in ORDER BY: a bare \`lo\` would sort by the text output column.
const RANGES = `select r.keyspace, r.lo::text, r.hi::text, r.owner, r.state from tessera.range r
                  order by r.keyspace collate "C", r.lo`;
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
  const keyspaces = await client.query<KeyspaceRow>(KEYSPACES);
  const ranges = await client.query<RangeRow>(RANGES);
  const tables = await client.query<TableRow>(TABLES);
  return create(CatalogSchema, {
    epoch: meta.epoch,
    clusterUid: meta.clusterUid,
    nodes: nodes.rows.map((n) => ({
      name: n.name,
      host: n.host,
      port: n.port,
      role: nodeRoleFromText(n.role),
      state: nodeStateFromText(n.state),
      replicaHost: n.replica_host,
      replicaPort: n.replica_port,
    })),
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
