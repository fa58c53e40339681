// Deleting decision rows nobody can need any more. A row is needed while any participant may still
// hold a gid of its txid: recovery would otherwise find the gid undecided and abort it, which for a
// logged commit would commit half a transaction. So a row goes only when it is older than the
// retention, every participant node was read in this pass and holds no gid of it. Txids are never
// reused (libs/twopc newTxid), so a deleted row cannot be mistaken for a newer transaction's.
//
// The retention must stay far above the routers' decide deadline (libs/twopc, 60 s): an abort row
// logged by recovery while a slow router was still preparing must outlive that router's chance to
// decide commit. A lost abort row is otherwise harmless: recovery logs abort again.
import type pg from 'pg';
import type { Logger } from '@tessera/telemetry';

export interface CleanupInput {
  /** Nodes whose pg_prepared_xacts was read in this pass. */
  reached: ReadonlySet<string>;
  /** Txids that still have a gid on some node. */
  present: ReadonlySet<string>;
  retentionMs: number;
  log: Logger;
  /** Rows looked at per call; the rest wait for the next pass. */
  batch?: number;
}

interface Row {
  txid: string;
  decision: 'commit' | 'abort';
  participants: string[];
}

/** Deletes finished decision rows; returns how many. */
export async function cleanupDecisions(pool: pg.Pool, input: CleanupInput): Promise<number> {
  const { rows } = await pool.query<Row>(
    `select txid, decision, participants from tessera.txn_decision
      where decided_at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)
      order by decided_at limit $2`,
    [input.retentionMs, input.batch ?? 1000],
  );
  const done = rows.filter(
    (r) =>
      !input.present.has(r.txid) &&
      // A commit row lists every node that prepared; without that list we cannot know it is done.
      (r.decision === 'abort' || r.participants.length > 0) &&
      r.participants.every((n) => input.reached.has(n)),
  );
  if (done.length === 0) return 0;
  const { rowCount } = await pool.query(
    `delete from tessera.txn_decision
      where txid = any($1::text[])
        and decided_at < clock_timestamp() - make_interval(secs => $2::float8 / 1000)`,
    [done.map((r) => r.txid), input.retentionMs],
  );
  input.log.info({ deleted: rowCount ?? 0 }, 'deleted finished 2PC decision rows');
  return rowCount ?? 0;
}
