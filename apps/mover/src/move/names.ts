// Names of what a move creates, deterministic per job and database, so whoever resumes or
// cancels the job finds them (and a cleanup record written before each names it).

/** Publication (on the source), subscription (on the target) and slot (on the source) share it. */
export function replicationName(jobId: bigint, dbIndex: number): string {
  return `tessera_mv_${jobId}_${dbIndex}`;
}

/** The marker table every node gets: one row per move job, published with the job's row filter. */
export const MARKER_TABLE = 'tessera.mover_marker';
