// The copy step of a move (the "copying" phase), per database: the move's slot created on the
// source by the mover itself, exporting its snapshot; the range's rows of every table, and the
// job's marker row, copied in that snapshot to the target (pg/snapshot-copy.ts); then the
// subscription created on that slot with no copy of its own, so it streams exactly what
// committed after the snapshot. Resumed after a crash anywhere: a subscription means the
// database's copy is done; a slot without one is an earlier attempt's, whose rows on the target
// are deleted before the slot is dropped, and everything is copied again.
import { rowFilterSql } from '@tessera/keyspace';
import type pg from 'pg';
import { JobFailed, errorText, isTransient } from '../errors.js';
import { faultPoint } from '../job/faults.js';
import { ident, qualified, type NodeAddr } from '../nodes/sessions.js';
import { deleteMarkerRow } from '../pg/marker.js';
import {
  createSubscription,
  dropSlots,
  slotHolder,
  subscriptionStatus,
} from '../pg/replication.js';
import { deleteRange } from '../pg/rows.js';
import {
  beginInSnapshot,
  copyShape,
  copyTable,
  createExportedSlot,
  type TableCopy,
} from '../pg/snapshot-copy.js';
import type { MoveCtx, MoveDb } from './context.js';
import { Progress, Tally, whileReporting } from './copy-progress.js';
import { MARKER_TABLE } from './names.js';

/** How long the subscription may have to wait for our walsender to let the slot go. */
const SLOT_RELEASE_WAIT_MS = 10_000;

/**
 * Kill point (TESSERA_MOVER_FAULT) inside the copy of the first database: every table but the
 * last committed on the target, the last one's rows sent but not committed, no subscription yet.
 */
export const FAULT_COPY_UNCOMMITTED = 'copying: last table not committed';

export interface CopyResult {
  rows: number;
  bytes: number;
  /** The step's whole time: slots, copies and subscriptions. */
  seconds: number;
  /** Until the last table's rows were committed on the target (then the subscriptions). */
  copiedSeconds: number;
  /** Until the first COPY began (the slot created, its snapshot imported). */
  startSeconds: number;
}

/**
 * Waits (bounded) until the source has no Tessera prepared transaction; refuses on others (they
 * would block the slot's creation). `c` is any session on the source: the view is cluster-wide.
 */
export async function awaitNoPrepared(ctx: MoveCtx, c: pg.Client): Promise<void> {
  const { rt } = ctx;
  const start = Date.now();
  for (;;) {
    const { rows } = await c.query<{ gid: string }>(
      'select gid from pg_prepared_xacts order by prepared',
    );
    const foreign = rows.find((r) => !r.gid.startsWith('tessera:'));
    if (foreign)
      throw new JobFailed(
        `node ${ctx.source.name} has prepared transaction '${foreign.gid}' that Tessera did not make; it blocks the move's replication slot: COMMIT PREPARED or ROLLBACK PREPARED it`,
      );
    if (rows.length === 0) return;
    if (Date.now() - start > rt.config.preparedWaitMs)
      throw new JobFailed(
        `node ${ctx.source.name} still has ${rows.length} Tessera prepared transaction(s) (oldest ${rows[0]!.gid}) after ${Math.round(rt.config.preparedWaitMs / 1000)} s; they block the move's replication slot: see tessera txn list and tessera txn resolve`,
      );
    await rt.sleep(200);
  }
}

/** Opens sessions at once (each costs a backend's start); on any failure ends the others. */
async function openAll<T extends readonly Promise<pg.Client>[]>(
  opening: [...T],
): Promise<{ -readonly [K in keyof T]: pg.Client }> {
  const settled = await Promise.allSettled(opening);
  const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (failed) {
    for (const x of settled)
      if (x.status === 'fulfilled') await x.value.end().catch(() => undefined);
    throw failed.reason;
  }
  return settled.map((x) => (x as PromiseFulfilledResult<pg.Client>).value) as {
    -readonly [K in keyof T]: pg.Client;
  };
}

export async function copy(ctx: MoveCtx): Promise<CopyResult> {
  const tally = new Tally(ctx);
  for (const db of ctx.dbs) {
    ctx.rt.checkpoint();
    await copyDb(ctx, db, tally);
  }
  const seconds = tally.since();
  await tally.report(true);
  return {
    rows: tally.rows,
    bytes: tally.bytes,
    seconds,
    copiedSeconds: tally.copiedSeconds ?? seconds,
    startSeconds: tally.startSeconds ?? seconds,
  };
}

/**
 * One database's copy. `b` writes the rows on the target; `src` is a session on the source for
 * the checks around the slot. What does not depend on each other happens together: the copy's
 * fixed cost is what a small range's rate is made of.
 */
async function copyDb(ctx: MoveCtx, db: MoveDb, tally: Tally): Promise<void> {
  const { rt, source, target } = ctx;
  const [b, src] = await openAll([
    rt.nodes.connect(target, db.name, `job ${rt.id} copy`),
    rt.nodes.connect(source, db.name, `job ${rt.id} copy control`),
  ]);
  try {
    const record = (node: NodeAddr, kind: 'slot' | 'subscription') =>
      rt.recordCleanup({
        node: node.name,
        database: db.name,
        kind,
        name: db.objects,
        policy: 'always',
      });
    const [subscribed] = await Promise.all([
      subscriptionStatus(b, db.objects),
      record(source, 'slot'),
      record(target, 'subscription'),
    ]);
    if (subscribed) {
      tally.earlier(db);
      return;
    }
    await discardEarlierCopy(ctx, db, src, b);
    await awaitNoPrepared(ctx, src);
    await copyInSnapshot(ctx, db, b, tally);
    const t0 = Date.now();
    await awaitSlotReleased(ctx, src, db.objects);
    const released = Date.now();
    await createSubscription(b, db.objects, rt.nodes.conninfo(source, db.name, db.objects), {
      existingSlot: true,
    });
    rt.log.info(
      { database: db.name, slotReleaseMs: released - t0, subscribeMs: Date.now() - released },
      'subscribed to the slot copied in',
    );
  } finally {
    await Promise.all([b.end().catch(() => undefined), src.end().catch(() => undefined)]);
  }
}

/**
 * A slot without a subscription is an earlier attempt's, which may have committed some tables'
 * rows on the target: those go first (the marker row too), then the slot, so that as long as
 * rows may be left a slot is there to say so. Its walsender may still live (the old process's
 * connection not yet noticed gone): dropSlots ends it.
 */
async function discardEarlierCopy(
  ctx: MoveCtx,
  db: MoveDb,
  src: pg.Client,
  b: pg.Client,
): Promise<void> {
  const { rt, ks, range } = ctx;
  const holder = await slotHolder(src, db.objects);
  if (holder === undefined) return;
  let stale = 0;
  for (const t of db.tables)
    stale += await deleteRange(b, t, ks, range.lo, range.hi, {
      batchRows: rt.config.deleteBatchRows,
      rowsPerSec: 0,
      onBatch: () => rt.checkpoint(),
    });
  await deleteMarkerRow(b, rt.id);
  await dropSlots(src, db.objects, undefined);
  rt.log.warn(
    { database: db.name, rows: stale, slot: db.objects, heldBy: holder },
    "discarded an earlier attempt's copy (its rows on the target, then its slot); copying again",
  );
}

/** The marker row first (tiny), then the tables in the plan's order. */
function copiesOf(ctx: MoveCtx, db: MoveDb): Omit<TableCopy, 'shape'>[] {
  return [
    { table: MARKER_TABLE, where: `job_id = ${ctx.rt.id.toString()}` },
    ...db.tables.map((t) => ({
      table: qualified(t.schema, t.name),
      where: rowFilterSql(ident(t.keyColumn), ctx.ks.keyType, ctx.ks.seed, ctx.range),
    })),
  ];
}

/** What the copy of one database works with. */
interface Run {
  ctx: MoveCtx;
  db: MoveDb;
  /** The source's session in the exported snapshot. */
  a: pg.Client;
  /** The target's session that writes the rows. */
  b: pg.Client;
  tally: Tally;
  progress: Progress;
}

/**
 * Creates the slot and copies every table in its snapshot. The replication connection stays
 * open, idle, until the copy's transaction ended: the exported snapshot lives only as long as it.
 * A cancel or a lost lease ends every session at once, so neither a long COPY nor a slot creation
 * waiting for old transactions outlives the job's claim (a mover taking it over would otherwise
 * find this one still writing rows to the target).
 */
async function copyInSnapshot(ctx: MoveCtx, db: MoveDb, b: pg.Client, tally: Tally) {
  const { rt, source } = ctx;
  const [repl, a] = await openAll([
    rt.nodes.connectReplication(source, db.name, `job ${rt.id} slot`),
    rt.nodes.connect(source, db.name, `job ${rt.id} copy`),
  ]);
  const own: { end(): Promise<void> }[] = [repl, a];
  const stop = () => {
    for (const s of [...own, b]) void s.end().catch(() => undefined);
  };
  const signal = rt.signal;
  signal.addEventListener('abort', stop, { once: true });
  try {
    rt.checkpoint();
    const t0 = Date.now();
    const slot = await createExportedSlot(repl, db.objects);
    rt.log.info(
      { database: db.name, slot: db.objects, at: slot.consistentPoint, ms: Date.now() - t0 },
      'slot created',
    );
    await beginInSnapshot(a, slot.snapshotName);
    tally.startSeconds ??= tally.since();
    const progress = new Progress(ctx, db, b);
    own.push(progress);
    const run: Run = { ctx, db, a, b, tally, progress };
    const copies = copiesOf(ctx, db);
    for (const [i, c] of copies.entries())
      await copyOne(
        run,
        { ...c, shape: await copyShape(a, b, c.table) },
        {
          data: i > 0,
          fault: db.index === 0 && i === copies.length - 1,
        },
      );
    await a.query('commit');
    tally.copiedSeconds = tally.since();
  } catch (e) {
    // Sessions ended by a cancel or a lost lease fail with "Connection terminated": say why.
    rt.checkpoint();
    throw e;
  } finally {
    signal.removeEventListener('abort', stop);
    // The replication connection last: the snapshot must outlive every use of it. The others
    // are ended together (each waits for its server to close the connection).
    await Promise.all(own.filter((s) => s !== repl).map((s) => s.end().catch(() => undefined)));
    await repl.end().catch(() => undefined);
  }
}

/** One table (or the marker row, not counted as data) copied, reported while it goes. */
async function copyOne(run: Run, t: TableCopy, o: { data: boolean; fault: boolean }) {
  const { ctx, db, tally } = run;
  const t0 = Date.now();
  const work = copyTable(run.a, run.b, t, {
    onBytes: (n) => {
      if (o.data) tally.liveBytes += n;
    },
    ...(o.fault ? { beforeCommit: () => faultPoint(FAULT_COPY_UNCOMMITTED) } : {}),
  });
  let done: { rows: number; bytes: number };
  try {
    done = await whileReporting(work, async () => {
      if (o.data) tally.liveRows = await run.progress.rows();
      await tally.report();
    });
  } catch (e) {
    ctx.rt.checkpoint();
    if (isTransient(e)) throw e;
    throw new JobFailed(
      `copying ${db.name}/${t.table} from ${ctx.source.name} to ${ctx.target.name} failed: ${errorText(e)}`,
    );
  }
  if (!o.data) return;
  tally.tableDone(done.rows, done.bytes);
  await tally.report();
  ctx.rt.log.info(
    {
      database: db.name,
      table: t.table,
      rows: done.rows,
      bytes: done.bytes,
      format: t.shape.format,
      textBecause: t.shape.textBecause,
      ms: Date.now() - t0,
    },
    'table copied',
  );
}

/**
 * Until the walsender of our replication connection has let the slot go: the subscription's
 * would otherwise find it in use and try again only after wal_retrieve_retry_interval (5 s).
 */
async function awaitSlotReleased(ctx: MoveCtx, c: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + SLOT_RELEASE_WAIT_MS;
  for (;;) {
    const holder = await slotHolder(c, name);
    if (holder === undefined)
      throw new JobFailed(
        `the move's replication slot ${name} vanished from ${ctx.source.name} right after the copy; the job undoes itself (retry the move)`,
      );
    if (holder === null) return;
    if (Date.now() > deadline) {
      ctx.rt.log.warn({ slot: name, pid: holder }, 'the slot is still held after the copy');
      return;
    }
    await ctx.rt.sleep(20);
  }
}
