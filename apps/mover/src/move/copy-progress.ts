// Progress of a move's copy (move/copy.ts): rows and bytes so far, the Prometheus counters kept
// level with them, a durable report about once a second while a long table copies, the rows of
// the table in flight read from the target's pg_stat_progress_copy.
import type pg from 'pg';
import { errorText } from '../errors.js';
import { copyProgressOf } from '../pg/snapshot-copy.js';
import type { MoveCtx, MoveDb } from './context.js';

const REPORT_EVERY_MS = 1_000;

/** Rows and bytes so far, the metrics kept level with them, and a report about once a second. */
export class Tally {
  rows = 0;
  bytes = 0;
  startSeconds: number | undefined;
  copiedSeconds: number | undefined;
  /** The table being copied: rows from the target's progress view, bytes as they pass. */
  liveRows = 0;
  liveBytes = 0;
  private countedRows = 0;
  private countedBytes = 0;
  private lastReport = 0;
  private readonly startMs = Date.now();

  constructor(private readonly ctx: MoveCtx) {}

  since(): number {
    return (Date.now() - this.startMs) / 1000;
  }

  tableDone(rows: number, bytes: number): void {
    this.rows += rows;
    this.bytes += bytes;
    this.liveRows = 0;
    this.liveBytes = 0;
  }

  /** A database an earlier attempt copied: its counts died with that process; the plan's stand in. */
  earlier(db: MoveDb): void {
    const tables = this.ctx.plan.databases[db.index]!.tables;
    const rows = tables.reduce((n, t) => n + t.rows, 0);
    const bytes = tables.reduce((n, t) => n + t.bytes, 0);
    this.rows += rows;
    this.bytes += bytes;
    this.countedRows += rows;
    this.countedBytes += bytes;
  }

  async report(force = false): Promise<void> {
    const { rt, plan } = this.ctx;
    const rows = this.rows + this.liveRows;
    const bytes = this.bytes + this.liveBytes;
    if (rows > this.countedRows) {
      rt.metrics.rowsCopied.inc({ keyspace: plan.keyspace }, rows - this.countedRows);
      this.countedRows = rows;
    }
    if (bytes > this.countedBytes) {
      rt.metrics.bytesCopied.inc({ keyspace: plan.keyspace }, bytes - this.countedBytes);
      this.countedBytes = bytes;
    }
    if (!force && Date.now() - this.lastReport < REPORT_EVERY_MS) return;
    this.lastReport = Date.now();
    await rt.report('copy', {
      progress: { rows, totalRows: plan.rows, bytes, totalBytes: plan.bytes },
    });
  }
}

/** Runs `tick` about once a second until `work` settles; answers what `work` did. */
export async function whileReporting<T>(work: Promise<T>, tick: () => Promise<void>): Promise<T> {
  let settled = false;
  const watched = work.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([watched, new Promise((r) => (timer = setTimeout(r, REPORT_EVERY_MS)))]);
    clearTimeout(timer);
    if (settled) return work;
    await tick();
  }
}

/**
 * Rows the target's COPY took so far (pg_stat_progress_copy), read on a session of its own,
 * opened only once a table takes longer than a report's interval.
 */
export class Progress {
  private session: Promise<pg.Client> | undefined;
  private last = 0;
  private ended = false;
  /** The writer's backend (pg keeps it from BackendKeyData; @types/pg does not list it). */
  private readonly pid: number;

  constructor(
    private readonly ctx: MoveCtx,
    private readonly db: MoveDb,
    writer: pg.Client,
  ) {
    this.pid = (writer as unknown as { processID: number }).processID;
  }

  /** Best effort: a progress read that fails answers the last one (the copy goes on regardless). */
  async rows(): Promise<number> {
    const { rt, target } = this.ctx;
    if (this.ended) return this.last;
    try {
      this.session ??= rt.nodes.connect(target, this.db.name, `job ${rt.id} copy progress`);
      this.last = (await copyProgressOf(await this.session, this.pid)).rows;
    } catch (e) {
      rt.log.debug({ err: errorText(e) }, 'could not read the copy progress');
      const dead = this.session;
      this.session = undefined;
      void dead?.then((c) => c.end()).catch(() => undefined);
    }
    return this.last;
  }

  async end(): Promise<void> {
    this.ended = true;
    const c = await this.session?.catch(() => undefined);
    await c?.end();
  }
}
