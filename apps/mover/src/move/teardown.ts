// The end of a move. Teardown: every `always` cleanup record (subscription, its slots, the
// publication, the marker rows), both fences rewritten from the catalog (the flip made the
// catalog agree with them), no slot of the job left on the source, the move ended in the catalog.
// Delete: the range's rows on the old owner, in throttled batches, then VACUUM (the `on_success`
// record), checked to be gone. Undo (cancel, or failure before the flip): unfreeze if frozen,
// then every `always` and `on_failure` record, then the move ended in the catalog.
import { RangeState } from '@tessera/proto';
import { JobFailed } from '../errors.js';
import type { JobRuntime } from '../job/runtime.js';
import { writeFence } from '../pg/fences.js';
import { countRange } from '../pg/rows.js';
import { isFrozen, keyspaceInfo, nodeAddr, ownedRanges, rangeAt } from './catalog-view.js';
import { dismissCleanup, runCleanup } from './cleanup.js';
import type { MoveCtx } from './context.js';
import type { MovePlan } from './spec.js';

/**
 * The move ended in the catalog: routers stop restricting reads of the keyspace to each node's
 * ranges (routing/owned-rows.ts), so only once no node holds rows of the range it does not own.
 */
export async function endMove(rt: JobRuntime, plan: MovePlan): Promise<void> {
  await rt.call(() =>
    rt.coord.jobs.changeRangeMove({
      jobId: rt.id,
      moverId: rt.moverId,
      keyspace: plan.keyspace,
      lo: BigInt(plan.lo),
      hi: BigInt(plan.hi),
      remove: true,
    }),
  );
}

/** Slots of this job still on a node (there must be none once it ends). */
export async function jobSlotsOn(rt: JobRuntime, node: string): Promise<string[]> {
  const catalog = await rt.catalog();
  return rt.nodes.with(nodeAddr(catalog, node), 'postgres', async (c) =>
    (
      await c.query<{ slot_name: string }>(
        `select slot_name from pg_replication_slots where slot_name like $1`,
        [`tessera\\_mv\\_${rt.id}\\_%`],
      )
    ).rows.map((r) => r.slot_name),
  );
}

export async function teardown(ctx: MoveCtx): Promise<void> {
  const { rt, plan } = ctx;
  await runCleanup(rt, ['always']);
  const catalog = await rt.catalog();
  for (const node of [ctx.source, ctx.target])
    for (const db of ctx.dbs)
      await rt.nodes.with(node, db.name, (c) =>
        writeFence(c, ctx.ks, ownedRanges(catalog, plan.keyspace, node.name), db.tables),
      );
  // Succeeded: nothing to undo on failure any more.
  await dismissCleanup(rt, (r) => r.policy === 'on_failure');
  const left = await jobSlotsOn(rt, plan.source);
  if (left.length > 0)
    throw new Error(`replication slot(s) ${left.join(', ')} are still on ${plan.source}`);
}

export async function deleteOldRows(ctx: MoveCtx): Promise<{ rows: number; seconds: number }> {
  const { rt, plan } = ctx;
  const start = Date.now();
  let rows = 0;
  for (const db of ctx.dbs)
    await rt.nodes.with(ctx.source, db.name, async (c) => {
      for (const t of db.tables) rows += await countRange(c, t, ctx.ks, ctx.range.lo, ctx.range.hi);
    });
  await runCleanup(rt, ['on_success']);
  for (const db of ctx.dbs)
    await rt.nodes.with(ctx.source, db.name, async (c) => {
      for (const t of db.tables) {
        const n = await countRange(c, t, ctx.ks, ctx.range.lo, ctx.range.hi);
        if (n > 0)
          throw new JobFailed(
            `${n} row(s) of the moved range are still in ${db.name}/${t.schema}.${t.name} on ${plan.source} after the delete`,
          );
      }
    });
  await endMove(rt, plan);
  return { rows, seconds: (Date.now() - start) / 1000 };
}

/** Cancel or failure before the flip: everything back as it was. */
export async function undoMove(rt: JobRuntime, plan: MovePlan | undefined): Promise<void> {
  if (!plan) {
    // Failed in its plan step: nothing was created (records, if any, still say what to remove).
    await runCleanup(rt, ['always', 'on_failure']);
    return;
  }
  const catalog = await rt.catalog();
  const r = rangeAt(catalog, plan.keyspace, BigInt(plan.lo));
  if (r && r.owner === plan.target)
    throw new JobFailed(
      `range ${plan.keyspace}:${plan.lo} is already owned by ${plan.target}; the move cannot be undone`,
    );
  // The source's fence back to the catalog before unfreezing (the cutover may have narrowed it).
  const ks = keyspaceInfo(catalog, plan.keyspace);
  const source = nodeAddr(catalog, plan.source);
  for (const db of plan.databases)
    await rt.nodes.with(source, db.name, (c) =>
      writeFence(
        c,
        ks,
        ownedRanges(catalog, plan.keyspace, plan.source),
        db.tables.map((t) => ({ schema: t.schema, name: t.name, keyColumn: t.keyColumn })),
      ),
    );
  if (r && isFrozen(r))
    await rt.call(() =>
      rt.coord.jobs.changeRange({
        jobId: rt.id,
        moverId: rt.moverId,
        keyspace: plan.keyspace,
        lo: r.lo,
        hi: r.hi,
        owner: plan.source,
        state: RangeState.ACTIVE,
      }),
    );
  await runCleanup(rt, ['always', 'on_failure']);
  const left = await jobSlotsOn(rt, plan.source);
  if (left.length > 0)
    throw new Error(`replication slot(s) ${left.join(', ')} are still on ${plan.source}`);
  await endMove(rt, plan);
}
