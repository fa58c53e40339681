// The verify step of a move (DESIGN.md section 6, step 5): per table and chunk of the range's
// hash space, row count and two digests on the two snapshots the cutover took inside its freeze.
// A difference keeps every copy and ends the job verify_failed. After a crash those snapshots
// are gone with the process, and nothing can take them again: the target has taken the range's
// writes since the flip, the source has not, so any comparison now would differ for rows written
// since. The step is then recorded as skipped, with the reason.
import type { KeyspaceInfo } from './catalog-view.js';
import { bisect, chunks, digest, same, type DigestTable, type Mismatch } from '../pg/digest.js';
import type { Snapshot } from '../pg/snapshots.js';
import type { MoveCtx } from './context.js';
import { SNAPSHOTS, type VerifySnapshots } from './cutover.js';

export interface VerifyResult {
  chunks: number;
  rows: number;
  mismatches: Mismatch[];
  seconds: number;
  /** Why nothing was compared (the cutover's snapshots died with a previous mover process). */
  skipped?: string;
}

const SKIPPED =
  "the cutover's verification snapshots died with the mover process that took them, and the " +
  'range has taken writes on its new owner since the flip: the copies can no longer be compared';

async function verifyTable(
  ctx: MoveCtx,
  ks: KeyspaceInfo,
  a: Snapshot,
  b: Snapshot,
  t: DigestTable,
  rowsHint: number,
): Promise<{ chunks: number; rows: number; mismatches: Mismatch[] }> {
  const { rt } = ctx;
  const parts = chunks(
    ctx.range.lo,
    ctx.range.hi,
    Math.ceil(Math.max(1, rowsHint) / rt.config.verifyChunkRows),
  );
  const mismatches: Mismatch[] = [];
  let rows = 0;
  for (const p of parts) {
    rt.checkpoint();
    const [da, db] = await Promise.all([
      digest(a.client, t, ks, p.lo, p.hi),
      digest(b.client, t, ks, p.lo, p.hi),
    ]);
    rows += da.rows;
    rt.metrics.verifiedRows.inc({ keyspace: ks.name }, da.rows);
    if (!same(da, db)) mismatches.push(await bisect(a.client, b.client, t, ks, p.lo, p.hi, da, db));
  }
  return { chunks: parts.length, rows, mismatches };
}

export async function verify(ctx: MoveCtx): Promise<VerifyResult> {
  const { rt, plan } = ctx;
  const start = Date.now();
  const snaps = rt.memory.get(SNAPSHOTS) as VerifySnapshots | undefined;
  rt.memory.delete(SNAPSHOTS);
  const result: VerifyResult = { chunks: 0, rows: 0, mismatches: [], seconds: 0 };
  if (snaps === undefined && ctx.dbs.length > 0) {
    rt.log.warn({ range: ctx.range.lo.toString() }, `verification skipped: ${SKIPPED}`);
    return { ...result, skipped: SKIPPED };
  }
  try {
    for (const db of ctx.dbs) {
      const a = snaps!.source.find((s) => s.database === db.name)!;
      const b = snaps!.target.find((s) => s.database === db.name)!;
      for (const [i, t] of db.digestTables.entries()) {
        const r = await verifyTable(
          ctx,
          ctx.ks,
          a,
          b,
          t,
          plan.databases[db.index]!.tables[i]!.rows,
        );
        result.chunks += r.chunks;
        result.rows += r.rows;
        result.mismatches.push(
          ...r.mismatches.map((m) => ({ ...m, table: `${db.name}/${m.table}` })),
        );
      }
    }
  } finally {
    await Promise.all([...(snaps?.source ?? []), ...(snaps?.target ?? [])].map((s) => s.close()));
  }
  result.seconds = (Date.now() - start) / 1000;
  return result;
}
