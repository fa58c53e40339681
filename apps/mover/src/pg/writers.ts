// Waiting, after the fence swap, for the writers that may have passed the old fence (the CREATE
// INDEX CONCURRENTLY idea, research/moves.md 1.6): sessions holding a write lock on a table of
// the keyspace whose transaction began before the swap, and prepared transactions holding one
// (a cross-node transaction prepared on the source must be resolved before the marker). Writers
// to other ranges are waited for, never blocked.
import type pg from 'pg';

export interface Writers {
  pids: number[];
  prepared: number;
}

const QUERY = `
  select coalesce(array_agg(distinct l.pid) filter (where l.pid is not null), '{}') as pids,
         count(*) filter (where l.pid is null)::int as prepared
    from pg_locks l left join pg_stat_activity a on a.pid = l.pid
   where l.locktype = 'relation' and l.granted
     and l.mode in ('RowExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock')
     and l.database = (select oid from pg_database where datname = current_database())
     and l.relation = any($1::oid[])
     and (l.pid is null or (l.pid <> pg_backend_pid() and a.xact_start < $2::timestamptz))`;

/** The oid of each table (null where it does not exist), in the order given. */
export async function oidsOf(
  c: pg.ClientBase,
  tables: readonly string[],
): Promise<(number | null)[]> {
  const { rows } = await c.query<{ oid: number | null }>(
    'select to_regclass(t)::oid as oid from unnest($1::text[]) with ordinality as u(t, i) order by i',
    [tables],
  );
  return rows.map((r) => r.oid);
}

/** Writers still in flight that began before `since` (a server timestamp). */
export async function writersSince(
  c: pg.ClientBase,
  tableOids: readonly (number | null)[],
  since: string,
): Promise<Writers> {
  const oids = tableOids.filter((o): o is number => o !== null);
  if (oids.length === 0) return { pids: [], prepared: 0 };
  const { rows } = await c.query<{ pids: number[]; prepared: number }>(QUERY, [oids, since]);
  return { pids: rows[0]!.pids, prepared: rows[0]!.prepared };
}

/** Polls every millisecond until none is left (resolves undefined) or the deadline (resolves the last seen). */
export async function waitForWriters(
  c: pg.ClientBase,
  oids: readonly (number | null)[],
  since: string,
  deadline: number,
): Promise<Writers | undefined> {
  for (;;) {
    const w = await writersSince(c, oids, since);
    if (w.pids.length === 0 && w.prepared === 0) return undefined;
    if (performance.now() > deadline) return w;
    await new Promise((r) => setTimeout(r, 1));
  }
}
