// The cutover of a move (DESIGN.md section 6, step 4; research/moves.md 1.6), against the
// router's contract (docs/operations.md, "What the mover needs from routers"):
//
//   freeze (range frozen, epoch E1) -> every live router acked E1 (so it holds new writes of the
//   range and no statement admitted before E1 still runs) -> narrow the source's fence with
//   CREATE OR REPLACE FUNCTION -> wait for writers that began before the swap (and prepared
//   transactions) -> marker written on the source seen on the target -> verification snapshots on
//   both -> flip: owner := target, still frozen (E2; the job is committed in the same
//   transaction) -> every live router acked E2 (reads of the range now go to the target, writes
//   still held) -> release (E3).
//
// Until the flip the attempt may give up (its budget spent, a router slow to ack, a writer that
// will not finish): the source's fence is widened again, the range unfrozen with its owner
// unchanged, and the cutover tried again after a pause. After the flip it can only go forward.
import { RangeState } from '@tessera/proto';
import type pg from 'pg';
import { CutoverAborted, JobFailed, errorText } from '../errors.js';
import { swapFence } from '../pg/fences.js';
import { markerRoundTrip } from '../pg/marker.js';
import { snapshotOn, type Snapshot } from '../pg/snapshots.js';
import { oidsOf, waitForWriters } from '../pg/writers.js';
import { isFrozen, ownedRanges, rangeAt, without } from './catalog-view.js';
import type { MoveCtx } from './context.js';

export interface CutoverResult {
  attempts: number;
  /** Freeze to release: how long writes of the range were held. */
  pauseMs: number;
  freezeAckMs: number;
  writersMs: number;
  markerMs: number;
  snapshotsMs: number;
  flipAckMs: number;
  epochs: { freeze: string; flip: string; release: string };
  /** Wall clock (Unix ms) when the freeze committed and when the release did (benches line them up). */
  frozenAtMs: number;
  releasedAtMs: number;
  /** Resumed after a crash past the flip (no timings). */
  resumed?: boolean;
}

export interface VerifySnapshots {
  source: Snapshot[];
  target: Snapshot[];
}

export const SNAPSHOTS = 'verification snapshots';

interface Sessions {
  a: pg.Client[];
  b: pg.Client[];
  /** Opened before the freeze, so the snapshots inside it cost one round trip each. */
  snapA: pg.Client[];
  snapB: pg.Client[];
}

async function openSessions(ctx: MoveCtx): Promise<Sessions> {
  const { rt } = ctx;
  const s: Sessions = { a: [], b: [], snapA: [], snapB: [] };
  try {
    for (const db of ctx.dbs) {
      s.a.push(await rt.nodes.connect(ctx.source, db.name, `job ${rt.id} cutover`));
      s.b.push(await rt.nodes.connect(ctx.target, db.name, `job ${rt.id} cutover`));
      s.snapA.push(await rt.nodes.connect(ctx.source, db.name, `job ${rt.id} verify`));
      s.snapB.push(await rt.nodes.connect(ctx.target, db.name, `job ${rt.id} verify`));
    }
  } catch (e) {
    await closeSessions(s);
    throw e;
  }
  return s;
}

/** Ends the cutover's sessions, except those now holding verification snapshots. */
async function closeSessions(s: Sessions, keep: ReadonlySet<pg.Client> = new Set()): Promise<void> {
  for (const c of [...s.a, ...s.b, ...s.snapA, ...s.snapB])
    if (!keep.has(c)) await c.end().catch(() => undefined);
}

async function closeSnapshots(snaps: Snapshot[]): Promise<void> {
  await Promise.all(snaps.map((s) => s.close()));
}

function changeRange(ctx: MoveCtx, owner: string, state: RangeState, commitJob = false) {
  const { rt } = ctx;
  return rt.call(() =>
    rt.coord.jobs.changeRange({
      jobId: rt.id,
      moverId: rt.moverId,
      keyspace: ctx.plan.keyspace,
      lo: ctx.range.lo,
      hi: ctx.range.hi,
      owner,
      state,
      commitJob,
    }),
  );
}

/** Waits, however long it takes, until every live router acked `epoch` (after the flip). */
async function awaitAllAcks(ctx: MoveCtx, epoch: bigint): Promise<void> {
  const { rt } = ctx;
  for (;;) {
    const w = await rt.call(() => rt.coord.jobs.awaitEpoch({ epoch, timeoutMs: 5_000n }));
    if (w.reached) return;
    rt.log.warn(
      { epoch: epoch.toString(), waitingFor: w.waitingFor },
      'routers have not acknowledged the flip yet; writes of the range stay held',
    );
  }
}

/** Undoes a cutover attempt that did not flip: source fence widened again, range unfrozen. */
export async function abortCutover(ctx: MoveCtx): Promise<void> {
  const { rt } = ctx;
  const catalog = await rt.catalog();
  const r = rangeAt(catalog, ctx.plan.keyspace, ctx.range.lo);
  if (!r || r.owner !== ctx.plan.source) return;
  const ranges = ownedRanges(catalog, ctx.plan.keyspace, ctx.plan.source);
  for (const db of ctx.dbs)
    await rt.nodes.with(ctx.source, db.name, (c) => swapFence(c, ctx.plan.keyspace, ranges));
  if (isFrozen(r)) await changeRange(ctx, ctx.plan.source, RangeState.ACTIVE);
}

async function attempt(ctx: MoveCtx, s: Sessions, n: number): Promise<CutoverResult> {
  const { rt, plan } = ctx;
  const budget = rt.config.cutoverBudgetMs;
  const t0 = performance.now();
  const deadline = t0 + budget;
  const left = () => Math.max(0, deadline - performance.now());
  const oids = await Promise.all(s.a.map((c, i) => oidsOf(c, ctx.dbs[i]!.regclasses)));
  const narrowed = without(ownedRanges(await rt.catalog(), plan.keyspace, plan.source), ctx.range);

  // 1. Freeze, and wait until every live router holds new writes of the range.
  const freeze = await changeRange(ctx, plan.source, RangeState.FROZEN);
  const tFrozen = performance.now();
  const frozenAtMs = Date.now();
  await rt.phaseSoon('frozen', 'cutover');
  const acks = await rt.call(() =>
    rt.coord.jobs.awaitEpoch({ epoch: freeze.epoch, timeoutMs: BigInt(Math.ceil(left())) }),
  );
  if (!acks.reached)
    throw new CutoverAborted(
      `router(s) ${acks.waitingFor.join(', ')} did not acknowledge the freeze (epoch ${freeze.epoch}) within the ${budget} ms budget`,
    );
  const tAcked = performance.now();

  // 2. Narrow the source's fence (no table lock), then wait for writers that began before.
  const since: string[] = [];
  for (const c of s.a) since.push(await swapFence(c, plan.keyspace, narrowed));
  for (let i = 0; i < s.a.length; i++) {
    const w = await waitForWriters(s.a[i]!, oids[i]!, since[i]!, deadline);
    if (w)
      throw new CutoverAborted(
        `${w.pids.length} session(s) (pids ${w.pids.slice(0, 5).join(', ')}) and ${w.prepared} prepared transaction(s) were still writing the keyspace's tables on ${plan.source} when the ${budget} ms budget ran out`,
      );
  }
  const tWriters = performance.now();

  // 3. Everything the source committed is on the target.
  for (let i = 0; i < s.a.length; i++) {
    const ms = await markerRoundTrip(s.a[i]!, s.b[i]!, rt.id, left());
    if (ms === undefined)
      throw new CutoverAborted(
        `the marker did not reach ${plan.target} within the ${budget} ms budget`,
      );
  }
  const tMarker = performance.now();

  // 4. Verification snapshots, both sides quiescent for the range.
  const snaps: VerifySnapshots = { source: [], target: [] };
  try {
    await Promise.all(
      ctx.dbs.map(async (db, i) => {
        const [sa, sb] = await Promise.all([
          snapshotOn(s.snapA[i]!, ctx.source.name, db.name),
          snapshotOn(s.snapB[i]!, ctx.target.name, db.name),
        ]);
        snaps.source.push(sa);
        snaps.target.push(sb);
      }),
    );
  } catch (e) {
    await closeSnapshots([...snaps.source, ...snaps.target]);
    throw new CutoverAborted(`could not open the verification snapshots: ${errorText(e)}`);
  }
  const tSnaps = performance.now();
  if (performance.now() > deadline) {
    await closeSnapshots([...snaps.source, ...snaps.target]);
    const ms = (a: number, b: number) => Math.round(b - a);
    throw new CutoverAborted(
      `the ${budget} ms budget ran out before the flip (acks ${ms(tFrozen, tAcked)} ms, fence and writers ${ms(tAcked, tWriters)} ms, marker ${ms(tWriters, tMarker)} ms, snapshots ${ms(tMarker, tSnaps)} ms)`,
    );
  }

  // 5. The flip: the point of no return.
  let flip;
  try {
    flip = await changeRange(ctx, plan.target, RangeState.FROZEN, true);
  } catch (e) {
    await closeSnapshots([...snaps.source, ...snaps.target]);
    throw e;
  }
  rt.memory.set(SNAPSHOTS, snaps);
  await rt.phaseSoon('flipped', 'cutover');
  await awaitAllAcks(ctx, flip.epoch);
  const tFlipAcked = performance.now();
  const release = await changeRange(ctx, plan.target, RangeState.ACTIVE);
  const tReleased = performance.now();
  const pauseMs = tReleased - tFrozen;
  rt.metrics.pauseSeconds.observe(pauseMs / 1000);
  rt.metrics.cutovers.inc({ outcome: 'flipped' });
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    attempts: n,
    pauseMs: r1(pauseMs),
    freezeAckMs: r1(tAcked - tFrozen),
    writersMs: r1(tWriters - tAcked),
    markerMs: r1(tMarker - tWriters),
    snapshotsMs: r1(tSnaps - tMarker),
    flipAckMs: r1(tFlipAcked - tSnaps),
    epochs: {
      freeze: freeze.epoch.toString(),
      flip: flip.epoch.toString(),
      release: release.epoch.toString(),
    },
    frozenAtMs,
    releasedAtMs: Date.now(),
  };
}

export async function cutover(ctx: MoveCtx): Promise<CutoverResult> {
  const { rt, plan } = ctx;
  let last = '';
  for (let n = 1; n <= rt.config.cutoverAttempts; n++) {
    rt.checkpoint();
    const catalog = await rt.catalog();
    const r = rangeAt(catalog, plan.keyspace, ctx.range.lo);
    if (!r || r.hi !== ctx.range.hi)
      throw new JobFailed(`range ${plan.keyspace}:${plan.lo} changed bounds during the move`);
    if (r.owner === plan.target) {
      // A crash after the flip: finish it.
      await awaitAllAcks(ctx, catalog.epoch);
      const release = isFrozen(r)
        ? await changeRange(ctx, plan.target, RangeState.ACTIVE)
        : { epoch: catalog.epoch };
      return {
        attempts: n,
        pauseMs: 0,
        freezeAckMs: 0,
        writersMs: 0,
        markerMs: 0,
        snapshotsMs: 0,
        flipAckMs: 0,
        epochs: { freeze: '', flip: '', release: release.epoch.toString() },
        frozenAtMs: 0,
        releasedAtMs: Date.now(),
        resumed: true,
      };
    }
    if (r.owner !== plan.source)
      throw new JobFailed(
        `range ${plan.keyspace}:${plan.lo} is owned by ${r.owner} now, not ${plan.source}`,
      );
    // Whatever a crash left (frozen, or the source's fence narrowed), start from the catalog.
    await abortCutover(ctx);
    const s = await openSessions(ctx);
    let keep = new Set<pg.Client>();
    try {
      const result = await attempt(ctx, s, n);
      keep = new Set([...s.snapA, ...s.snapB]);
      return result;
    } catch (e) {
      if (!(e instanceof CutoverAborted)) throw e;
      last = e.message;
      rt.metrics.cutovers.inc({ outcome: 'aborted' });
      rt.log.warn(
        { attempt: n, reason: e.message },
        'cutover aborted before the flip; range unfrozen, owner unchanged',
      );
      await abortCutover(ctx);
      await rt.report('cutover', { progress: { abortedAttempts: n, lastAbort: e.message } });
      if (n < rt.config.cutoverAttempts) await rt.sleep(Math.min(30_000, 500 * 2 ** (n - 1)));
    } finally {
      await closeSessions(s, keep);
    }
  }
  throw new JobFailed(
    `the cutover was aborted ${rt.config.cutoverAttempts} time(s) before its flip (last: ${last}); the range stays on ${plan.source}: retry when the cluster is quieter, or raise --cutover-budget-ms`,
  );
}
