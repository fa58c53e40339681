// The prepare step of a move (DESIGN.md section 6, step 2): declare the move in the catalog, then
// per database, each object after its cleanup record: the marker table and row, the tables the
// target lacks, both nodes' function-based fences (the target's widened to the range), stale
// rows of the range deleted on the target, the publication on the source. The slot and the
// subscription come with the copy (move/copy.ts). Every action is idempotent, so a crash
// anywhere in here is resumed by simply running the step again.
import { writeFence } from '../pg/fences.js';
import { deleteMarkerRow, ensureMarkerRow, ensureMarkerTable } from '../pg/marker.js';
import { createPublication, subscriptionStatus } from '../pg/replication.js';
import { deleteRange } from '../pg/rows.js';
import { copyTableDefinitions } from '../pg/schema.js';
import { ident } from '../nodes/sessions.js';
import { ownedRanges, withRange } from './catalog-view.js';
import type { MoveCtx, MoveDb } from './context.js';

async function ensureDatabase(ctx: MoveCtx, db: string): Promise<void> {
  await ctx.rt.nodes.with(ctx.target, 'postgres', async (c) => {
    const found = await c.query('select 1 from pg_database where datname = $1', [db]);
    if (found.rowCount === 0) await c.query(`create database ${ident(db)}`);
  });
}

async function prepareDb(ctx: MoveCtx, db: MoveDb): Promise<void> {
  const { rt, ks, range, source, target } = ctx;
  const jobId = rt.id;
  const rowsDetail = {
    keyspace: ks.name,
    lo: range.lo.toString(),
    hi: range.hi.toString(),
    tables: db.tables,
  };
  await ensureDatabase(ctx, db.name);
  const a = await rt.nodes.connect(source, db.name, `job ${jobId} prepare`);
  const b = await rt.nodes.connect(target, db.name, `job ${jobId} prepare`);
  try {
    // The marker: the table on both nodes, this job's row on the source only.
    await rt.recordCleanup({
      node: source.name,
      database: db.name,
      kind: 'marker',
      name: jobId.toString(),
      policy: 'always',
    });
    await rt.recordCleanup({
      node: target.name,
      database: db.name,
      kind: 'marker',
      name: jobId.toString(),
      policy: 'always',
    });
    await ensureMarkerTable(a);
    await ensureMarkerTable(b);
    await ensureMarkerRow(a, jobId);

    // Fences: the source's (function-based, as the catalog says) and the target's, widened to
    // the range. A failed or cancelled job puts both back as the catalog says.
    const catalog = await rt.catalog();
    const fenceDetail = JSON.stringify({ keyspace: ks.name, tables: db.tables });
    await rt.recordCleanup({
      node: source.name,
      database: db.name,
      kind: 'fence',
      name: ks.name,
      policy: 'on_failure',
      detailJson: fenceDetail,
    });
    await rt.recordCleanup({
      node: target.name,
      database: db.name,
      kind: 'fence',
      name: ks.name,
      policy: 'on_failure',
      detailJson: fenceDetail,
    });
    const missing = ctx.plan.databases[db.index]!.tables.filter((t) => t.missingOnTarget);
    if (missing.length > 0) {
      // The copied definitions may call the fence function: create it first.
      await b.query('create schema if not exists tessera');
      await writeFence(b, ks, ownedRanges(catalog, ks.name, target.name), []);
      await copyTableDefinitions(rt.nodes.auth, source, b, db.name, missing);
      rt.log.info(
        { database: db.name, tables: missing.map((t) => `${t.schema}.${t.name}`) },
        'created missing tables on the target',
      );
    }
    const convertedA = await writeFence(
      a,
      ks,
      ownedRanges(catalog, ks.name, source.name),
      db.tables,
    );

    // Stale rows of the range on the target (an earlier attempt's), then its fence widened.
    await rt.recordCleanup({
      node: target.name,
      database: db.name,
      kind: 'rows',
      name: `${ks.name}:${range.lo}`,
      policy: 'on_failure',
      detailJson: JSON.stringify(rowsDetail),
    });
    await rt.recordCleanup({
      node: source.name,
      database: db.name,
      kind: 'rows',
      name: `${ks.name}:${range.lo}`,
      policy: 'on_success',
      detailJson: JSON.stringify(rowsDetail),
    });
    let stale = 0;
    if (!(await subscriptionStatus(b, db.objects))) {
      for (const t of db.tables)
        stale += await deleteRange(b, t, ks, range.lo, range.hi, {
          batchRows: rt.config.deleteBatchRows,
          rowsPerSec: 0,
          onBatch: () => rt.checkpoint(),
        });
      await deleteMarkerRow(b, jobId);
    }
    const convertedB = await writeFence(
      b,
      ks,
      withRange(ownedRanges(catalog, ks.name, target.name), range),
      db.tables,
    );
    if (stale > 0)
      rt.log.warn(
        { database: db.name, rows: stale },
        'deleted stale rows of the range on the target',
      );
    const converted = [
      ...convertedA.converted.map((t) => `${source.name}:${t}`),
      ...convertedB.converted.map((t) => `${target.name}:${t}`),
    ];
    if (converted.length > 0) rt.log.info({ converted }, 'tables given the function-based fence');

    // The publication on the source.
    await rt.recordCleanup({
      node: source.name,
      database: db.name,
      kind: 'publication',
      name: db.objects,
      policy: 'always',
    });
    await createPublication(a, db.objects, ks, range, db.tables, jobId);
    await rt.phase('preparing', 'prepare');
  } finally {
    await a.end().catch(() => undefined);
    await b.end().catch(() => undefined);
  }
}

/**
 * Waits until every live router acked `epoch`, the one that declared the move: from then on they
 * read each node's own ranges only (the router's routing/owned-rows.ts), before any row reaches
 * the target. A router that cannot ack stops serving once its lease lapses.
 */
async function awaitRoutersSeeMove(ctx: MoveCtx, epoch: bigint): Promise<void> {
  const { rt } = ctx;
  for (;;) {
    rt.checkpoint();
    const w = await rt.call(() => rt.coord.jobs.awaitEpoch({ epoch, timeoutMs: 5_000n }));
    if (w.reached) return;
    rt.log.warn(
      { epoch: epoch.toString(), waitingFor: w.waitingFor },
      'routers have not acknowledged the move yet; its copy waits',
    );
  }
}

export async function prepare(ctx: MoveCtx): Promise<void> {
  const { rt, plan, range } = ctx;
  const declared = await rt.call(() =>
    rt.coord.jobs.changeRangeMove({
      jobId: rt.id,
      moverId: rt.moverId,
      keyspace: plan.keyspace,
      lo: range.lo,
      hi: range.hi,
      source: plan.source,
      target: plan.target,
    }),
  );
  // A router that has not seen the move would read the target's copies as its own rows.
  await awaitRoutersSeeMove(ctx, declared.epoch);
  for (const db of ctx.dbs) {
    rt.checkpoint();
    await prepareDb(ctx, db);
  }
}
