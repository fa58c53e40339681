// The marker (research/moves.md 1.6): one row per move job in tessera.mover_marker on the source,
// published with the job's row filter. Bumping it on the source and seeing the new value on the
// target proves the target applied everything the source committed before the bump: the
// cutover's precondition, never a lag estimate.
import type pg from 'pg';
import { MARKER_TABLE } from '../move/names.js';

export async function ensureMarkerTable(c: pg.ClientBase): Promise<void> {
  await c.query('create schema if not exists tessera');
  await c.query(
    `create table if not exists ${MARKER_TABLE} (
       job_id int8 primary key,
       seq int8 not null default 0,
       at timestamptz not null default clock_timestamp())`,
  );
}

export async function ensureMarkerRow(c: pg.ClientBase, jobId: bigint): Promise<void> {
  await c.query(`insert into ${MARKER_TABLE} (job_id) values ($1) on conflict do nothing`, [
    jobId.toString(),
  ]);
}

export async function deleteMarkerRow(c: pg.ClientBase, jobId: bigint): Promise<void> {
  const t = await c.query<{ oid: number | null }>(`select to_regclass($1)::oid as oid`, [
    MARKER_TABLE,
  ]);
  if (t.rows[0]?.oid == null) return;
  await c.query(`delete from ${MARKER_TABLE} where job_id = $1`, [jobId.toString()]);
}

/**
 * Bumps the marker on the source and waits until the target has it. Resolves with the round
 * trip in milliseconds, or undefined if `deadlineMs` passed first.
 */
export async function markerRoundTrip(
  source: pg.ClientBase,
  target: pg.ClientBase,
  jobId: bigint,
  deadlineMs: number,
): Promise<number | undefined> {
  const start = performance.now();
  const { rows } = await source.query<{ seq: string }>(
    `update ${MARKER_TABLE} set seq = seq + 1, at = clock_timestamp() where job_id = $1 returning seq::text`,
    [jobId.toString()],
  );
  const seq = rows[0]?.seq;
  if (seq === undefined) throw new Error(`the marker row of job ${jobId} is missing on the source`);
  for (;;) {
    const seen = await target.query<{ ok: boolean }>(
      `select coalesce((select seq >= $2::int8 from ${MARKER_TABLE} where job_id = $1), false) as ok`,
      [jobId.toString(), seq],
    );
    const ms = performance.now() - start;
    if (seen.rows[0]?.ok) return ms;
    if (ms > deadlineMs) return undefined;
    // A pause between looks, even the first: this runs while the range is frozen, and a tight
    // loop of queries would take CPU from the other ranges' statements on the same nodes.
    await new Promise((r) => setTimeout(r, 1));
  }
}
