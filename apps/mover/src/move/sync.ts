// The sync step of a move: stream until the marker comes back within the catch-up budget three
// times in a row (research/moves.md 1.5: never start a cutover on a lag estimate). A subscription
// that stopped on an error, or a slot whose WAL was removed, fails the job with one sentence (the
// job then undoes itself). The copy before it is move/copy.ts.
import { JobFailed } from '../errors.js';
import { markerRoundTrip } from '../pg/marker.js';
import { slotLag, subscriptionStatus } from '../pg/replication.js';
import type { MoveCtx } from './context.js';

const REPORT_EVERY_MS = 1_000;

async function checkSlot(ctx: MoveCtx, name: string, database: string): Promise<number> {
  const lag = await ctx.rt.nodes.with(ctx.source, database, (c) => slotLag(c, name));
  if (!lag)
    throw new JobFailed(
      `the move's replication slot ${name} is missing on ${ctx.source.name}; the job undoes itself (retry the move)`,
    );
  if (lag.walStatus === 'lost')
    throw new JobFailed(
      `the WAL of the move's slot ${name} on ${ctx.source.name} was removed (max_slot_wal_keep_size reached); the job undoes itself (retry the move, perhaps at a quieter time)`,
    );
  ctx.rt.metrics.lagBytes.set({ job: ctx.rt.id.toString() }, lag.lagBytes);
  return lag.lagBytes;
}

/** Streams until three marker round trips in a row (every database) take at most the budget. */
export async function catchUp(ctx: MoveCtx): Promise<{ roundTripsMs: number[]; seconds: number }> {
  const { rt } = ctx;
  const budget = rt.config.catchupBudgetMs;
  const start = Date.now();
  const sessions = await Promise.all(
    ctx.dbs.map(async (db) => ({
      db,
      a: await rt.nodes.connect(ctx.source, db.name, `job ${rt.id} marker`),
      b: await rt.nodes.connect(ctx.target, db.name, `job ${rt.id} marker`),
    })),
  );
  try {
    let good = 0;
    let last: number[] = [];
    let lastReport = 0;
    while (good < 3) {
      rt.checkpoint();
      let worst = 0;
      for (const s of sessions) {
        const ms = await markerRoundTrip(s.a, s.b, rt.id, Math.max(budget * 50, 5_000));
        if (ms === undefined) {
          worst = Infinity;
          break;
        }
        rt.metrics.markerRoundTrip.observe(ms / 1000);
        worst = Math.max(worst, ms);
      }
      if (worst <= budget) {
        good++;
        last.push(worst);
      } else {
        good = 0;
        last = [];
      }
      if (Date.now() - lastReport > REPORT_EVERY_MS) {
        lastReport = Date.now();
        let lag = 0;
        for (const s of sessions) lag += await checkSlot(ctx, s.db.objects, s.db.name);
        const status = await Promise.all(
          sessions.map((s) => subscriptionStatus(s.b, s.db.objects)),
        );
        const stopped = status.findIndex((x) => !x || !x.enabled);
        if (stopped >= 0)
          throw new JobFailed(
            `the move's subscription ${sessions[stopped]!.db.objects} on ${ctx.target.name} stopped after an error (its server log says which); the job undoes itself`,
          );
        await rt.report('sync', {
          progress: {
            lagBytes: lag,
            lastRoundTripMs: Number.isFinite(worst) ? Math.round(worst * 10) / 10 : null,
          },
        });
      }
      if (Date.now() - start > rt.config.syncTimeoutMs)
        throw new JobFailed(
          `the target did not catch up within ${Math.round(rt.config.syncTimeoutMs / 1000)} s (marker round trips above ${budget} ms): the source may write faster than the target applies; retry later or raise --catchup-budget-ms`,
        );
      if (good < 3 && worst > budget) await rt.sleep(20);
    }
    return {
      roundTripsMs: last.map((x) => Math.round(x * 10) / 10),
      seconds: (Date.now() - start) / 1000,
    };
  } finally {
    for (const s of sessions) {
      await s.a.end().catch(() => undefined);
      await s.b.end().catch(() => undefined);
    }
  }
}
