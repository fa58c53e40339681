// One node's part of a read across nodes: sends the leaf statement on a backend and turns the
// node's answer into the executor's LeafStream (RowDescription, DataRows, CommandComplete; an
// ErrorResponse is thrown as the node's own error), with backpressure (execute/node-stream.ts).
// When abandoned early, the query is cancelled and the backend drained to ReadyForQuery so it goes
// back to its pool clean; inside a transaction block a cancel would fail the node's transaction,
// so there the rest of the answer is read and dropped.
// Paged (a cursor): the leaf is a named portal fetched a page at a time (Execute with a row limit,
// then Flush), so it can stop between pages, and leave its backend free for other statements of
// the session while the client does not fetch: no cancel, no Sync until it ends.
import {
  BackendCode,
  FLUSH,
  SYNC,
  Writer,
  writeClose,
  writeDescribe,
  writeExecute,
  decodeCommandComplete,
  decodeDataRow,
  decodeReadyForQuery,
  decodeRowDescription,
} from '@tessera/pg-wire';
import type { LeafMessage } from '@tessera/merge';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Backend } from '../pool/backend.js';
import { NodeStream } from '../execute/node-stream.js';

/** Rows queued before the node's socket is paused, and the mark at which it resumes. */
const MARKS = { high: 512, low: 128, what: 'read across nodes' } as const;

/**
 * A leaf read as a named portal, `rows` at a time. `held`: the leaf statement is `DECLARE portal
 * CURSOR WITH HOLD FOR ...` (a simple Query); its pages start once it is answered.
 */
export interface Paging {
  readonly portal: string;
  readonly rows: number;
  readonly held?: boolean;
}

export class LeafRun extends NodeStream<LeafMessage> {
  /** DataRows received (EXPLAIN ANALYZE). */
  rows = 0;
  /** Time from start to the node's CommandComplete, ms (EXPLAIN ANALYZE). */
  elapsedMs: number | undefined;
  private startedMs = 0;
  /** Paged: the portal is suspended and no page is asked for; the backend is free meanwhile. */
  private parked = false;
  /** Its answer is the one the backend reads now (false while parked or queued behind another). */
  private readingNow = false;
  /** Held: the DECLARE has not been answered yet. */
  private declaring: boolean;

  /**
   * `messages`: `quiet` leading simple Queries (settings replay) whose answers are swallowed,
   * then the leaf statement (a simple Query, or Parse/Bind/Describe/Execute/Sync).
   * `cancellable`: false inside a transaction block (abandon() reads the rest instead).
   * `paging`: the leaf statement binds this portal and executes its first page, then Flush.
   */
  constructor(
    backend: Backend,
    messages: readonly Buffer[],
    quiet: number,
    private readonly cancellable = true,
    readonly paging?: Paging,
  ) {
    super(backend, messages, quiet, MARKS);
    this.declaring = paging?.held === true;
  }

  override start(): void {
    this.startedMs = performance.now();
    super.start();
  }

  protected override onReadable(): void {
    this.readingNow = true;
    super.onReadable();
  }

  protected override reading(): boolean {
    return this.readingNow;
  }

  protected override pausesSocket(): boolean {
    return this.paging === undefined;
  }

  protected override detachSelf(): void {
    if (this.paging !== undefined) this.backend.detach(this.sink);
    else this.backend.detach();
  }

  /** Paged: a page in flight ends first (pageEnded closes the portal); a parked one ends now. */
  protected override stop(): void {
    if (this.parked) this.endPages(true);
    else if (this.cancellable && this.paging === undefined) super.stop();
  }

  /** Paged: the next page once the merge has read most of this one (or waits for more). */
  protected override pulled(left: number, waiting: boolean): void {
    if (this.parked && (waiting || left <= MARKS.low)) this.nextPage();
  }

  protected handle(code: number, body: Buffer): void {
    if (this.declaring) return this.declared(code, body);
    switch (code) {
      case BackendCode.RowDescription:
        return this.push({ kind: 'RowDescription', fields: decodeRowDescription(body) });
      case BackendCode.DataRow:
        this.rows++;
        // One copy per row: the values then hold no reference to the socket's chunk, so rows kept
        // by a merge (groups, a sort) pin only their own bytes.
        if (!this.abandoned)
          this.push({ kind: 'DataRow', values: decodeDataRow(Buffer.from(body)) });
        return;
      case BackendCode.CommandComplete:
        this.answered = true;
        this.elapsedMs = performance.now() - this.startedMs;
        this.push({ kind: 'CommandComplete', tag: decodeCommandComplete(body) });
        return this.endPages(true);
      case BackendCode.ErrorResponse:
        this.nodeError(body);
        return this.endPages(false);
      case BackendCode.PortalSuspended:
        return this.pageEnded();
      case BackendCode.EmptyQueryResponse:
        this.answered = true;
        return this.push({
          kind: 'error',
          error: new RouterError(SQLSTATE.internalError, 'empty leaf'),
        });
      case BackendCode.ReadyForQuery:
        return this.readyForQuery(body);
      default:
        // ParseComplete, BindComplete, NoData, notices, ParameterStatus: nothing for the merge.
        return;
    }
  }

  // ---- paging ----

  /** Held: the DECLARE's answer; once it is in, the portal's columns and first page. */
  private declared(code: number, body: Buffer): void {
    if (code === BackendCode.ErrorResponse) this.nodeError(body);
    if (code !== BackendCode.ReadyForQuery) return;
    this.declaring = false;
    if (this.answered) return this.readyForQuery(body);
    this.backend.status = decodeReadyForQuery(body);
    const p = this.paging!;
    this.send([
      writeDescribe(new Writer(p.portal.length + 16), 'P', p.portal).flush(),
      writeExecute(new Writer(p.portal.length + 16), p.portal, p.rows).flush(),
      FLUSH,
    ]);
  }

  /**
   * A page ended with the portal suspended: parked until the merge pulls again (pulled() asks for
   * the next page then), so a page is only ever asked for while the session reads this leaf and
   * the backend is free for the session's other statements in between; or the end.
   */
  private pageEnded(): void {
    if (this.abandoned) return this.endPages(true);
    this.parked = true;
    this.readingNow = false;
    this.backend.detach(this.sink);
  }

  private nextPage(): void {
    const p = this.paging!;
    this.parked = false;
    this.send([writeExecute(new Writer(p.portal.length + 16), p.portal, p.rows).flush(), FLUSH]);
  }

  /** The portal is done with (closed if `close`) and the extended cycle ends with a Sync. */
  private endPages(close: boolean): void {
    if (this.paging === undefined) return;
    this.parked = false;
    const messages = [SYNC];
    if (close) messages.unshift(writeClose(new Writer(64), 'P', this.paging.portal).flush());
    this.send(messages);
  }

  /**
   * Writes the leaf's next messages behind whatever the session sent the node since (a statement
   * between two fetches is queued behind a page in flight): the answers then come in the order
   * the backend's readers are queued in.
   */
  private send(messages: Buffer[]): void {
    this.backend.detach(this.sink);
    this.readingNow = this.backend.attach(this.sink);
    this.backend.write(messages);
  }
}
