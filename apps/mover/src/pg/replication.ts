// The move's logical replication objects (research/moves.md 1.6, design A): a publication on the
// source with the range's row filter for every table of the keyspace plus the job's marker row,
// a subscription on the target (streaming from the slot the mover created and copied in, or, for
// a new node's reference tables, with Postgres's own initial copy), and their removal, which
// never leaves a slot behind: a slot still in use is freed by ending its walsender first.
import { rowFilterSql, type HashRange } from '@tessera/keyspace';
import type pg from 'pg';
import type { KeyspaceInfo, ShardedTable } from '../move/catalog-view.js';
import { MARKER_TABLE } from '../move/names.js';
import { ident, literal, qualified } from '../nodes/sessions.js';

export async function createPublication(
  c: pg.ClientBase,
  name: string,
  ks: KeyspaceInfo,
  range: HashRange,
  tables: readonly ShardedTable[],
  jobId: bigint,
): Promise<boolean> {
  const found = await c.query('select 1 from pg_publication where pubname = $1', [name]);
  if (found.rowCount !== 0) return false;
  const items = tables.map(
    (t) =>
      `${qualified(t.schema, t.name)} WHERE (${rowFilterSql(ident(t.keyColumn), ks.keyType, ks.seed, range)})`,
  );
  items.push(`${MARKER_TABLE} WHERE (job_id = ${jobId.toString()})`);
  await c.query(`CREATE PUBLICATION ${ident(name)} FOR TABLE ${items.join(', ')}`);
  return true;
}

export async function dropPublication(c: pg.ClientBase, name: string): Promise<void> {
  await c.query(`DROP PUBLICATION IF EXISTS ${ident(name)}`);
}

export interface SubscriptionStatus {
  oid: number;
  enabled: boolean;
  /** pg_subscription_rel states per table: i, d, f, s, r. */
  states: { relid: number; table: string; state: string }[];
  applyErrors: number;
  syncErrors: number;
}

export async function subscriptionStatus(
  c: pg.ClientBase,
  name: string,
): Promise<SubscriptionStatus | undefined> {
  const sub = await c.query<{ oid: number; subenabled: boolean }>(
    `select s.oid, s.subenabled from pg_subscription s
      where s.subname = $1 and s.subdbid = (select oid from pg_database where datname = current_database())`,
    [name],
  );
  const row = sub.rows[0];
  if (!row) return undefined;
  const rels = await c.query<{ relid: number; t: string; state: string }>(
    `select r.srrelid::int as relid, r.srrelid::regclass::text as t, r.srsubstate::text as state
       from pg_subscription_rel r where r.srsubid = $1 order by 1`,
    [row.oid],
  );
  const stats = await c.query<{ apply: string; sync: string }>(
    `select apply_error_count::text as apply, sync_error_count::text as sync
       from pg_stat_subscription_stats where subid = $1`,
    [row.oid],
  );
  return {
    oid: row.oid,
    enabled: row.subenabled,
    states: rels.rows.map((r) => ({ relid: r.relid, table: r.t, state: r.state })),
    applyErrors: Number(stats.rows[0]?.apply ?? 0),
    syncErrors: Number(stats.rows[0]?.sync ?? 0),
  };
}

export interface SubscriptionOptions {
  /**
   * The slot (named like the subscription) already exists on the source and the rows it starts
   * from are already on the target, copied by the mover in the slot's exported snapshot
   * (pg/snapshot-copy.ts): no slot and no copy of its own, every table ready at once, and the
   * stream begins at the slot's consistent point. Otherwise the subscription creates the slot and
   * copies every table itself (tablesync: text format, one temporary slot per table).
   */
  existingSlot?: boolean;
}

/**
 * CREATE SUBSCRIPTION on the target. Without `existingSlot` it creates the slot on the source,
 * which waits for the transactions running there, so 2PC leftovers must be cleared first.
 * Answers false when it already existed.
 */
export async function createSubscription(
  c: pg.ClientBase,
  name: string,
  conninfo: string,
  opts: SubscriptionOptions = {},
): Promise<boolean> {
  if (await subscriptionStatus(c, name)) return false;
  const slot = opts.existingSlot ? 'create_slot = false, copy_data = false' : 'copy_data = true';
  await c.query(
    `CREATE SUBSCRIPTION ${ident(name)} CONNECTION ${literal(conninfo)} PUBLICATION ${ident(name)}
       WITH (${slot}, streaming = on, binary = true, disable_on_error = true, slot_name = ${literal(name)})`,
  );
  return true;
}

/**
 * Drops the subscription on the target, which also drops its slot on the source when the
 * source answers; when it does not, the subscription is detached from its slot and dropped, and
 * the slot (named in its own cleanup record) is dropped on the source later.
 */
export async function dropSubscription(
  c: pg.ClientBase,
  name: string,
): Promise<'dropped' | 'detached' | 'absent'> {
  if (!(await subscriptionStatus(c, name))) return 'absent';
  try {
    await c.query(`DROP SUBSCRIPTION ${ident(name)}`);
    return 'dropped';
  } catch (e) {
    // 08xxx: cannot connect to the publisher to drop the slot.
    const code = (e as { code?: string }).code ?? '';
    if (!code.startsWith('08') && !/could not connect|connection/i.test(String(e))) throw e;
    await c.query(`ALTER SUBSCRIPTION ${ident(name)} DISABLE`);
    await c.query(`ALTER SUBSCRIPTION ${ident(name)} SET (slot_name = NONE)`);
    await c.query(`DROP SUBSCRIPTION ${ident(name)}`);
    return 'detached';
  }
}

/** Drops the slot (and the subscription's table-sync slots) on the source, ending walsenders still on them. */
export async function dropSlots(
  c: pg.ClientBase,
  name: string,
  subOid: number | undefined,
): Promise<string[]> {
  const dropped: string[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    const { rows } = await c.query<{ slot_name: string; active_pid: number | null }>(
      `select slot_name, active_pid from pg_replication_slots
        where slot_name = $1 or ($2::int is not null and slot_name like 'pg_' || $2::int || '_sync_%')`,
      [name, subOid ?? null],
    );
    if (rows.length === 0) return dropped;
    for (const s of rows) {
      if (s.active_pid !== null) {
        await c.query('select pg_terminate_backend($1)', [s.active_pid]);
        continue;
      }
      try {
        await c.query('select pg_drop_replication_slot($1)', [s.slot_name]);
        dropped.push(s.slot_name);
      } catch (e) {
        // 55006: active again (a walsender raced back); 42704: gone meanwhile.
        const code = (e as { code?: string }).code;
        if (code !== '55006' && code !== '42704') throw e;
      }
    }
    await new Promise((r) => setTimeout(r, 20 * (attempt + 1)));
  }
  throw new Error(`replication slot ${name} stayed in use after ending its walsender 50 times`);
}

/** The slot's walsender, null when none holds it; undefined when there is no such slot. */
export async function slotHolder(
  c: pg.ClientBase,
  name: string,
): Promise<number | null | undefined> {
  const { rows } = await c.query<{ active_pid: number | null }>(
    'select active_pid from pg_replication_slots where slot_name = $1',
    [name],
  );
  return rows.length === 0 ? undefined : rows[0]!.active_pid;
}

/** WAL between the source's position and what the slot confirmed; wal_status too ('lost' = unrecoverable). */
export async function slotLag(
  c: pg.ClientBase,
  name: string,
): Promise<{ lagBytes: number; walStatus: string } | undefined> {
  const { rows } = await c.query<{ lag: string | null; wal_status: string | null }>(
    `select pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::int8::text as lag, wal_status
       from pg_replication_slots where slot_name = $1`,
    [name],
  );
  const r = rows[0];
  if (!r) return undefined;
  return { lagBytes: Number(r.lag ?? 0), walStatus: r.wal_status ?? '' };
}
