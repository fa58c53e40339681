// The verify step of a move (DESIGN.md section 6, step 5): per table and chunk of the range's
// hash space, row count and two digests on the two snapshots the cutover took inside its freeze.
// After a crash those snapshots are gone with the process: the range (now on the target) is then
// frozen again for a moment to take new ones (the source has not changed since its fence was
// narrowed). A difference keeps every copy and ends the job verify_failed.
import { RangeState } from '@tessera/proto';
import type { KeyspaceInfo } from './catalog-view.js';
import { bisect, chunks, digest, same, type DigestTable, type Mismatch } from '../pg/digest.js';
import { openSnapshot, type Snapshot } from '../pg/snapshots.js';
import { oidsOf, waitForWriters } from '../pg/writers.js';
import type { MoveCtx } from './context.js';
import { SNAPSHOTS, type VerifySnapshots } from './cutover.js';

export interface VerifyResult {
  chunks: number;
  rows: number;
  mismatches: Mismatch[];
  seconds: number;
  /** Snapshots retaken after a crash (a second, short freeze). */
  refrozen: boolean;
}

/** A short freeze of the range on its new owner to take snapshots again (after a crash). */
async function retakeSnapshots(ctx: MoveCtx): Promise<VerifySnapshots> {
  const { rt, plan } = ctx;
  const change = (state: RangeState) =>
    rt.call(() =>
      rt.coord.jobs.changeRange({
        jobId: rt.id,
        moverId: rt.moverId,
        keyspace: plan.keyspace,
        lo: ctx.range.lo,
        hi: ctx.range.hi,
        owner: plan.target,
        state,
      }),
    );
  const freeze = await change(RangeState.FROZEN);
  try {
    for (;;) {
      const w = await rt.call(() =>
        rt.coord.jobs.awaitEpoch({ epoch: freeze.epoch, timeoutMs: 5_000n }),
      );
      if (w.reached) break;
      rt.log.warn(
        { waitingFor: w.waitingFor },
        'routers have not acknowledged the verification freeze yet',
      );
    }
    const snaps: VerifySnapshots = { source: [], target: [] };
    for (const db of ctx.dbs) {
      // Writers that started before the freeze on the new owner finish first.
      await rt.nodes.with(ctx.target, db.name, async (c) => {
        const oids = await oidsOf(c, db.regclasses);
        const since = (await c.query<{ t: string }>('select clock_timestamp()::text as t')).rows[0]!
          .t;
        await waitForWriters(c, oids, since, performance.now() + 30_000);
      });
      snaps.source.push(await openSnapshot(rt.nodes, ctx.source, db.name));
      snaps.target.push(await openSnapshot(rt.nodes, ctx.target, db.name));
    }
    return snaps;
  } finally {
    await change(RangeState.ACTIVE);
  }
}

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
  let snaps = rt.memory.get(SNAPSHOTS) as VerifySnapshots | undefined;
  const refrozen = snaps === undefined && ctx.dbs.length > 0;
  if (refrozen) {
    rt.log.info('the cutover snapshots died with the previous process; taking them again');
    snaps = await retakeSnapshots(ctx);
  }
  rt.memory.delete(SNAPSHOTS);
  const result: VerifyResult = { chunks: 0, rows: 0, mismatches: [], seconds: 0, refrozen };
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
