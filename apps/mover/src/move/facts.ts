// The facts a move's plan is decided from (move/plan.ts decides; this file only reads): both
// nodes' replication settings and headroom, the prepared transactions on the source (waiting a
// bounded time for 2PC recovery to clear Tessera's own), every table of the keyspace in every
// database of the source with its replica identity, whether it is partitioned or a partition,
// and the range's rows and bytes in it, what the target lacks, and the target's free disk when
// the mover can see it.
import { statfsSync } from 'node:fs';
import { keyHashSql } from '@tessera/keyspace';
import { NodeState, RangeState, isLoopback, type Catalog } from '@tessera/proto';
import type pg from 'pg';
import type { JobRuntime } from '../job/runtime.js';
import { ident, qualified, type NodeAddr } from '../nodes/sessions.js';
import {
  keyspaceInfo,
  nodeAddr,
  shardedTables,
  type KeyspaceInfo,
  type ShardedTable,
} from './catalog-view.js';

export interface PreparedXact {
  gid: string;
  database: string;
  preparedMs: number;
  tessera: boolean;
}

export interface NodeFacts {
  name: string;
  walLevel: string;
  maxSlots: number;
  usedSlots: number;
  maxWalSenders: number;
  usedWalSenders: number;
  maxSlotWalKeepSize: string;
  maxLogicalWorkers: number;
  usedLogicalWorkers: number;
  isSuperuser: boolean;
  canReplicate: boolean;
  prepared: PreparedXact[];
  diskFreeBytes?: number | undefined;
  diskTotalBytes?: number | undefined;
}

export interface TableFacts extends ShardedTable {
  /** 'd' default, 'i' index, 'f' full, 'n' nothing (pg_class.relreplident). */
  replicaIdentity: string;
  /** Columns of the replica identity (all columns for FULL), null when there are none. */
  identityColumns: string[] | null;
  /** pg_class.relkind: 'r' an ordinary table, 'p' a partitioned one. */
  relkind: string;
  /** The partitioned table (schema.name) this one is a partition of (relispartition), or null. */
  partitionOf: string | null;
  columns: string[];
  rows: number;
  bytes: number;
  estimated: boolean;
  onTarget: boolean;
}

export interface DatabaseFacts {
  name: string;
  tables: TableFacts[];
}

export interface MoveFacts {
  keyspace: KeyspaceInfo;
  lo: bigint;
  /** The catalog's range at lo, if there is one. */
  range?: { hi: bigint; owner: string; frozen: boolean } | undefined;
  target: string;
  targetActive: boolean;
  source?: NodeFacts | undefined;
  targetFacts?: NodeFacts | undefined;
  databases: DatabaseFacts[];
  /** Waited this long for Tessera prepared transactions on the source to clear. */
  preparedWaitedMs: number;
}

const SETTINGS = `select name, setting from pg_settings where name in
  ('wal_level', 'max_replication_slots', 'max_wal_senders', 'max_slot_wal_keep_size',
   'max_logical_replication_workers', 'data_directory')`;

async function nodeFacts(rt: JobRuntime, node: NodeAddr, host: string): Promise<NodeFacts> {
  return rt.nodes.with(node, 'postgres', async (c) => {
    const s = new Map(
      (await c.query<{ name: string; setting: string }>(SETTINGS)).rows.map((r) => [
        r.name,
        r.setting,
      ]),
    );
    const counts = (
      await c.query<{ slots: string; senders: string; workers: string }>(
        `select (select count(*) from pg_replication_slots)::text as slots,
                (select count(*) from pg_stat_replication)::text as senders,
                (select count(*) from pg_stat_subscription where pid is not null)::text as workers`,
      )
    ).rows[0]!;
    const role = (
      await c.query<{ rolsuper: boolean; rolreplication: boolean }>(
        'select rolsuper, rolreplication from pg_roles where rolname = current_user',
      )
    ).rows[0]!;
    const prepared = (
      await c.query<{ gid: string; database: string; ms: string }>(
        `select gid, database, (extract(epoch from prepared) * 1000)::int8::text as ms from pg_prepared_xacts order by prepared`,
      )
    ).rows.map((p) => ({
      gid: p.gid,
      database: p.database,
      preparedMs: Number(p.ms),
      tessera: p.gid.startsWith('tessera:'),
    }));
    const facts: NodeFacts = {
      name: node.name,
      walLevel: s.get('wal_level') ?? '',
      maxSlots: Number(s.get('max_replication_slots') ?? 0),
      usedSlots: Number(counts.slots),
      maxWalSenders: Number(s.get('max_wal_senders') ?? 0),
      usedWalSenders: Number(counts.senders),
      maxSlotWalKeepSize: s.get('max_slot_wal_keep_size') ?? '-1',
      maxLogicalWorkers: Number(s.get('max_logical_replication_workers') ?? 0),
      usedLogicalWorkers: Number(counts.workers),
      isSuperuser: role.rolsuper,
      canReplicate: role.rolsuper || role.rolreplication,
      prepared,
    };
    // Free disk is visible only when the node's data directory is on this machine.
    const dataDir = s.get('data_directory');
    if (dataDir && isLoopback(host)) {
      try {
        const st = statfsSync(dataDir);
        facts.diskFreeBytes = st.bavail * st.bsize;
        facts.diskTotalBytes = st.blocks * st.bsize;
      } catch {
        // not readable from here: the plan says the disk check could not run
      }
    }
    return facts;
  });
}

/** Databases of a node a move may concern: every one that accepts connections, not templates. */
export async function databasesOf(rt: JobRuntime, node: NodeAddr): Promise<string[]> {
  return rt.nodes.with(node, 'postgres', async (c) =>
    (
      await c.query<{ datname: string }>(
        `select datname from pg_database where datallowconn and not datistemplate order by datname collate "C"`,
      )
    ).rows.map((r) => r.datname),
  );
}

async function tableFacts(
  c: pg.Client,
  t: ShardedTable,
  ks: KeyspaceInfo,
  lo: bigint,
  hi: bigint,
): Promise<Omit<TableFacts, 'onTarget'> | undefined> {
  const name = qualified(t.schema, t.name);
  const found = await c.query<{ oid: number | null }>('select to_regclass($1)::oid as oid', [name]);
  const oid = found.rows[0]?.oid;
  if (oid === null || oid === undefined) return undefined;
  const ri = (
    await c.query<{
      ident: string;
      cols: string[] | null;
      reltuples: number;
      relkind: string;
      parent: string | null;
    }>(
      `select c.relreplident as ident, c.reltuples, c.relkind,
              case when c.relispartition then
                (select pn.nspname || '.' || p.relname from pg_inherits h
                   join pg_class p on p.oid = h.inhparent join pg_namespace pn on pn.oid = p.relnamespace
                  where h.inhrelid = c.oid)
              end as parent,
              case c.relreplident
                when 'f' then (select array_agg(a.attname::text order by a.attnum) from pg_attribute a
                                where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped)
                when 'n' then null
                else (select array_agg(a.attname::text order by a.attnum)
                        from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
                       where i.indrelid = c.oid
                         and ((c.relreplident = 'd' and i.indisprimary) or (c.relreplident = 'i' and i.indisreplident)))
              end as cols
         from pg_class c where c.oid = $1`,
      [oid],
    )
  ).rows[0]!;
  const columns = (
    await c.query<{ attname: string }>(
      `select attname::text as attname from pg_attribute where attrelid = $1 and attnum > 0 and not attisdropped
        order by attname collate "C"`,
      [oid],
    )
  ).rows.map((r) => r.attname);
  const hash = keyHashSql(ident(t.keyColumn), ks.keyType, ks.seed);
  const where = `${hash} between $1::int8 and $2::int8`;
  // Exact on tables up to 2M rows; a 1% block sample (scaled) above that.
  const big = ri.reltuples > 2_000_000;
  const sample = big ? ` tablesample system (1)` : '';
  const scale = big ? 100 : 1;
  const size = (
    await c.query<{ n: string; b: string }>(
      `select count(*)::text as n, coalesce(sum(pg_column_size(x.*)), 0)::text as b
         from ${name}${sample} x where ${where}`,
      [lo.toString(), hi.toString()],
    )
  ).rows[0]!;
  return {
    ...t,
    replicaIdentity: ri.ident,
    identityColumns: ri.cols,
    relkind: ri.relkind,
    partitionOf: ri.parent,
    columns,
    rows: Number(size.n) * scale,
    bytes: Number(size.b) * scale,
    estimated: big,
  };
}

async function tablesOn(
  rt: JobRuntime,
  node: NodeAddr,
  database: string,
  tables: ShardedTable[],
): Promise<Set<string>> {
  return rt.nodes.with(node, database, async (c) => {
    const out = new Set<string>();
    for (const t of tables) {
      const r = await c.query<{ oid: number | null }>('select to_regclass($1)::oid as oid', [
        qualified(t.schema, t.name),
      ]);
      if (r.rows[0]?.oid != null) out.add(`${t.schema}.${t.name}`);
    }
    return out;
  });
}

/**
 * Reads everything the plan needs. Waits (up to --prepared-wait-ms) while the source has
 * Tessera prepared transactions, which 2PC recovery resolves on its own and which would block
 * the replication slot.
 */
export async function gatherFacts(
  rt: JobRuntime,
  catalog: Catalog,
  spec: { keyspace: string; lo: bigint; to: string },
): Promise<MoveFacts> {
  const ks = keyspaceInfo(catalog, spec.keyspace);
  const r = catalog.ranges.find((x) => x.keyspace === spec.keyspace && x.lo === spec.lo);
  const targetNode = catalog.nodes.find((n) => n.name === spec.to);
  const facts: MoveFacts = {
    keyspace: ks,
    lo: spec.lo,
    range: r ? { hi: r.hi, owner: r.owner, frozen: r.state === RangeState.FROZEN } : undefined,
    target: spec.to,
    targetActive: targetNode?.state === NodeState.ACTIVE,
    databases: [],
    preparedWaitedMs: 0,
  };
  if (!r || !targetNode || r.owner === spec.to) return facts;
  const source = nodeAddr(catalog, r.owner);
  const target = nodeAddr(catalog, spec.to);
  const sourceHost = catalog.nodes.find((n) => n.name === r.owner)!.host;
  const start = Date.now();
  facts.source = await nodeFacts(rt, source, sourceHost);
  while (
    facts.source.prepared.some((p) => p.tessera) &&
    Date.now() - start < rt.config.preparedWaitMs
  ) {
    await rt.sleep(250);
    facts.source = await nodeFacts(rt, source, sourceHost);
  }
  facts.preparedWaitedMs = Date.now() - start;
  facts.targetFacts = await nodeFacts(rt, target, targetNode.host);

  const tables = shardedTables(catalog, spec.keyspace);
  if (tables.length === 0) return facts;
  const targetDbs = new Set(await databasesOf(rt, target));
  for (const db of await databasesOf(rt, source)) {
    const found = await rt.nodes.with(source, db, async (c) => {
      const out: Omit<TableFacts, 'onTarget'>[] = [];
      for (const t of tables) {
        const f = await tableFacts(c, t, ks, r.lo, r.hi);
        if (f) out.push(f);
      }
      return out;
    });
    if (found.length === 0) continue;
    const onTarget = targetDbs.has(db) ? await tablesOn(rt, target, db, found) : new Set<string>();
    facts.databases.push({
      name: db,
      tables: found.map((t) => ({ ...t, onTarget: onTarget.has(`${t.schema}.${t.name}`) })),
    });
  }
  return facts;
}
