// One node's part of a read across nodes: sends the leaf statement on a backend and turns the
// node's answer into the executor's LeafStream (RowDescription, DataRows, CommandComplete; an
// ErrorResponse is thrown as the node's own error). Streams with backpressure: while the executor
// does not pull, the backend socket is paused. When abandoned early, the query is cancelled and the
// backend drained to ReadyForQuery so it goes back to its pool clean; inside a transaction block a
// cancel would fail the node's transaction, so there the rest of the answer is read and dropped.
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
  decodeErrorResponse,
  decodeReadyForQuery,
  decodeRowDescription,
} from '@tessera/pg-wire';
import type { LeafMessage } from '@tessera/merge';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError, type Backend, type BackendSink } from '../pool/backend.js';

/** Rows queued before the node's socket is paused, and the mark at which it resumes. */
const HIGH_ROWS = 512;
const LOW_ROWS = 128;
/** How long a cancelled node may take to reach ReadyForQuery before its connection is closed. */
const DRAIN_TIMEOUT_MS = 10_000;

type Item = LeafMessage | { readonly kind: 'error'; readonly error: Error };

/**
 * A leaf read as a named portal, `rows` at a time. `held`: the leaf statement is `DECLARE portal
 * CURSOR WITH HOLD FOR ...` (a simple Query); its pages start once it is answered.
 */
export interface Paging {
  readonly portal: string;
  readonly rows: number;
  readonly held?: boolean;
}

export class LeafRun implements AsyncIterable<LeafMessage> {
  /** DataRows received (EXPLAIN ANALYZE). */
  rows = 0;
  /** Time from start to the node's CommandComplete, ms (EXPLAIN ANALYZE). */
  elapsedMs: number | undefined;
  /** Resolves once the backend is idle at ReadyForQuery (or dead): it may be reused or released. */
  readonly settled: Promise<void>;
  private settle!: () => void;
  private readonly queue: Item[] = [];
  private wake: (() => void) | undefined;
  private quietLeft: number;
  /** CommandComplete or ErrorResponse seen: the node's statement is over. */
  private answered = false;
  private ready = false;
  private paused = false;
  private abandoned = false;
  private iterated = false;
  private startedMs = 0;
  /** Paged: a page was asked for and has not ended (PortalSuspended, CommandComplete, error). */
  private inFlight = false;
  /** Paged: the portal is suspended and no page is asked for; the backend is free meanwhile. */
  private parked = false;
  /** Its answer is the one the backend reads now (false while parked or queued behind another). */
  private reading = false;
  /** Held: the DECLARE has not been answered yet. */
  private declaring: boolean;

  /**
   * `messages`: `quiet` leading simple Queries (settings replay) whose answers are swallowed,
   * then the leaf statement (a simple Query, or Parse/Bind/Describe/Execute/Sync).
   * `cancellable`: false inside a transaction block (abandon() reads the rest instead).
   * `paging`: the leaf statement binds this portal and executes its first page, then Flush.
   */
  constructor(
    readonly backend: Backend,
    private readonly messages: readonly Buffer[],
    quiet: number,
    private readonly cancellable = true,
    readonly paging?: Paging,
  ) {
    this.quietLeft = quiet;
    this.declaring = paging?.held === true;
    this.settled = new Promise<void>((resolve) => (this.settle = resolve));
  }

  start(): void {
    this.startedMs = performance.now();
    if (this.backend.dead) {
      this.fail(new Error('the connection closed'));
      return;
    }
    this.backend.attach(this.sink);
    this.backend.write(this.messages);
    this.inFlight = this.paging !== undefined && !this.declaring;
  }

  private readonly sink: BackendSink = {
    onReadable: () => {
      this.reading = true;
      try {
        for (let f = this.backend.nextFrame(); f; f = this.backend.nextFrame()) {
          this.handle(f.code, f.body);
          // Done, parked or queued again: what follows is another statement's (Backend hands it on).
          if (this.ready || !this.reading) break;
        }
      } catch (e) {
        this.backend.destroy('protocol error from node');
        this.fail(e as Error);
        return;
      }
      if (!this.paused && !this.ready && !this.paging && this.queue.length >= HIGH_ROWS) {
        this.paused = true;
        this.backend.pause();
      }
      this.notify();
    },
    onClosed: (_b, error) => this.fail(error),
  };

  private handle(code: number, body: Buffer): void {
    if (this.quietLeft > 0) {
      if (code === BackendCode.ReadyForQuery) {
        this.backend.status = decodeReadyForQuery(body);
        this.quietLeft--;
      }
      return;
    }
    if (this.declaring) return this.declared(code, body);
    switch (code) {
      case BackendCode.RowDescription:
        this.push({ kind: 'RowDescription', fields: decodeRowDescription(body) });
        return;
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
        this.endPages(true);
        return;
      case BackendCode.ErrorResponse:
        this.answered = true;
        this.push({ kind: 'error', error: new BackendError(decodeErrorResponse(body)) });
        this.endPages(false);
        return;
      case BackendCode.PortalSuspended:
        this.pageEnded();
        return;
      case BackendCode.EmptyQueryResponse:
        this.answered = true;
        this.push({ kind: 'error', error: new RouterError(SQLSTATE.internalError, 'empty leaf') });
        return;
      case BackendCode.ReadyForQuery:
        this.backend.status = decodeReadyForQuery(body);
        this.finish();
        return;
      default:
        // ParseComplete, BindComplete, NoData, notices, ParameterStatus: nothing for the merge.
        return;
    }
  }

  // ---- paging ----

  /** Held: the DECLARE's answer; once it is in, the portal's columns and first page. */
  private declared(code: number, body: Buffer): void {
    if (code === BackendCode.ErrorResponse) {
      this.answered = true;
      this.push({ kind: 'error', error: new BackendError(decodeErrorResponse(body)) });
    }
    if (code !== BackendCode.ReadyForQuery) return;
    this.backend.status = decodeReadyForQuery(body);
    this.declaring = false;
    if (this.answered) return this.finish();
    const p = this.paging!;
    this.inFlight = true;
    this.send([
      writeDescribe(new Writer(p.portal.length + 16), 'P', p.portal).flush(),
      writeExecute(new Writer(p.portal.length + 16), p.portal, p.rows).flush(),
      FLUSH,
    ]);
  }

  /**
   * A page ended with the portal suspended: parked until the merge pulls again (next() asks for
   * the next page then), so a page is only ever asked for while the session reads this leaf and
   * the backend is free for the session's other statements in between; or the end.
   */
  private pageEnded(): void {
    this.inFlight = false;
    if (this.abandoned) return this.endPages(true);
    this.parked = true;
    this.reading = false;
    this.backend.detach(this.sink);
  }

  private nextPage(): void {
    const p = this.paging!;
    this.parked = false;
    this.inFlight = true;
    this.send([writeExecute(new Writer(p.portal.length + 16), p.portal, p.rows).flush(), FLUSH]);
  }

  /** The portal is done with (closed if `close`) and the extended cycle ends with a Sync. */
  private endPages(close: boolean): void {
    if (this.paging === undefined) return;
    this.inFlight = false;
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
    this.reading = this.backend.attach(this.sink);
    this.backend.write(messages);
  }

  private push(item: Item): void {
    if (!this.abandoned) this.queue.push(item);
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private finish(): void {
    if (this.ready) return;
    this.ready = true;
    if (this.paging) this.backend.detach(this.sink);
    else this.backend.detach();
    if (this.paused) {
      this.paused = false;
      this.backend.resume();
    }
    this.notify();
    // A cancel sent for this statement must have reached the node before the backend is reused.
    void (this.cancelled ?? Promise.resolve()).then(() => this.settle());
  }

  private fail(error: Error): void {
    if (this.ready) return;
    this.ready = true;
    this.answered = true;
    this.backend.detach();
    this.push({
      kind: 'error',
      error:
        error instanceof RouterError || error instanceof BackendError
          ? error
          : new RouterError(
              SQLSTATE.connectionFailure,
              `the connection to node "${this.backend.target.node}" was lost: ${error.message}`,
            ),
    });
    this.notify();
    this.settle();
  }

  private cancelled: Promise<void> | undefined;

  /**
   * The executor no longer needs this node: drop what is queued, cancel the statement if it still
   * runs (and may be cancelled), and read on to ReadyForQuery (`settled`). Idempotent.
   */
  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.queue.length = 0;
    if (this.paused) {
      this.paused = false;
      this.backend.resume();
    }
    if (this.ready) return;
    // Paged: a page in flight ends first (pageEnded closes the portal); a parked one ends now.
    if (this.parked) this.endPages(true);
    else if (!this.answered && this.cancellable && !this.paging)
      this.cancelled = this.backend.sendCancel();
    const timer = setTimeout(() => {
      if (!this.ready) this.backend.destroy('a cancelled read across nodes did not end in time');
    }, DRAIN_TIMEOUT_MS);
    void this.settled.then(() => clearTimeout(timer));
  }

  [Symbol.asyncIterator](): AsyncIterator<LeafMessage> {
    if (this.iterated) throw new Error('a leaf stream is read once');
    this.iterated = true;
    return {
      next: async (): Promise<IteratorResult<LeafMessage>> => {
        for (;;) {
          const item = this.queue.shift();
          if (item !== undefined) {
            if (this.paused && this.queue.length <= LOW_ROWS) {
              this.paused = false;
              this.backend.resume();
            }
            if (this.parked && this.queue.length <= LOW_ROWS) this.nextPage();
            if (item.kind === 'error') throw item.error;
            return { value: item, done: false };
          }
          if (this.ready || this.abandoned) return { value: undefined, done: true };
          if (this.parked) this.nextPage();
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
      },
      return: async (): Promise<IteratorResult<LeafMessage>> => {
        this.abandon();
        return { value: undefined, done: true };
      },
    };
  }
}
