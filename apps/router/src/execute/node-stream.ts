// One node's answer to a statement the router reads itself (a leaf of a read across nodes, one
// node's COPY TO of a COPY across nodes), as an async stream of what a subclass makes of its
// frames. The router's own leading simple Queries (settings replay, the transaction's join) are
// swallowed; items wait in a queue with backpressure (the node's socket pauses while too many
// wait unread); an error is thrown where it came; when abandoned early the statement is cancelled
// (if the subclass lets it be) and the backend drained to ReadyForQuery before it is reused.
import { BackendCode, decodeErrorResponse, decodeReadyForQuery } from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError, type Backend, type BackendSink } from '../pool/backend.js';

/** How long a cancelled node may take to reach ReadyForQuery before its connection is closed. */
const DRAIN_TIMEOUT_MS = 10_000;

export type StreamItem<T> = T | { readonly kind: 'error'; readonly error: Error };

/** Items queued before the node's socket is paused, the mark at which it resumes, and a noun. */
export interface StreamMarks {
  readonly high: number;
  readonly low: number;
  /** What the statement is, for the drain timeout's reason: "read across nodes", ... */
  readonly what: string;
}

export abstract class NodeStream<T extends { readonly kind: string }> implements AsyncIterable<T> {
  /** Resolves once the backend is idle at ReadyForQuery (or dead): it may be reused or released. */
  readonly settled: Promise<void>;
  private settle!: () => void;
  protected readonly queue: StreamItem<T>[] = [];
  private wake: (() => void) | undefined;
  private quietLeft: number;
  /** CommandComplete or ErrorResponse seen: the node's statement is over. */
  protected answered = false;
  protected ready = false;
  protected abandoned = false;
  private paused = false;
  private iterated = false;
  private cancelled: Promise<void> | undefined;

  /**
   * `messages`: `quiet` leading simple Queries whose answers are swallowed, then the statement.
   */
  constructor(
    readonly backend: Backend,
    private readonly messages: readonly Buffer[],
    quiet: number,
    private readonly marks: StreamMarks,
  ) {
    this.quietLeft = quiet;
    this.settled = new Promise<void>((resolve) => (this.settle = resolve));
  }

  start(): void {
    if (this.backend.dead) return this.fail(new Error('the connection closed'));
    this.backend.attach(this.sink);
    this.backend.write(this.messages);
  }

  /** The statement's own frames (after the quiet ones). */
  protected abstract handle(code: number, body: Buffer): void;

  /** Whether frames after the one just handled are still this stream's (a subclass may hand on). */
  protected reading(): boolean {
    return true;
  }

  /** Whether a pile of unread items pauses the node's socket (a paged leaf bounds it itself). */
  protected pausesSocket(): boolean {
    return true;
  }

  /** What stops the statement when abandoned while it runs: a cancel, unless a subclass knows better. */
  protected stop(): void {
    if (!this.answered) this.cancelled = this.backend.sendCancel();
  }

  /** The reader took an item (`left` still queued) or waits for one (`left` 0, nothing queued). */
  protected pulled(_left: number, _waiting: boolean): void {}

  /** How the stream lets go of the backend when its answer is over. */
  protected detachSelf(): void {
    this.backend.detach();
  }

  protected readonly sink: BackendSink = {
    onReadable: () => {
      this.onReadable();
    },
    onClosed: (_b, error) => this.fail(error),
  };

  /** A subclass may note that the backend reads its answer now (then calls this). */
  protected onReadable(): void {
    try {
      for (let f = this.backend.nextFrame(); f; f = this.backend.nextFrame()) {
        if (this.quietLeft > 0) {
          if (f.code !== BackendCode.ReadyForQuery) continue;
          this.backend.status = decodeReadyForQuery(f.body);
          this.quietLeft--;
          continue;
        }
        this.handle(f.code, f.body);
        // Over, or handed on: what follows is another statement's (Backend hands it on).
        if (this.ready || !this.reading()) break;
      }
    } catch (e) {
      this.backend.destroy('protocol error from node');
      return this.fail(e as Error);
    }
    if (
      !this.paused &&
      !this.ready &&
      this.pausesSocket() &&
      this.queue.length >= this.marks.high
    ) {
      this.paused = true;
      this.backend.pause();
    }
    this.notify();
  }

  protected push(item: StreamItem<T>): void {
    if (!this.abandoned) this.queue.push(item);
  }

  /** An ErrorResponse: the statement is over, its error queued where it came. */
  protected nodeError(body: Buffer): void {
    this.answered = true;
    this.push({ kind: 'error', error: new BackendError(decodeErrorResponse(body)) });
  }

  /** ReadyForQuery: the backend's status, and the stream is over. */
  protected readyForQuery(body: Buffer): void {
    this.backend.status = decodeReadyForQuery(body);
    this.finish();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  protected finish(): void {
    if (this.ready) return;
    this.ready = true;
    this.detachSelf();
    this.resume();
    this.notify();
    // A cancel sent for this statement must have reached the node before the backend is reused.
    void (this.cancelled ?? Promise.resolve()).then(() => this.settle());
  }

  protected fail(error: Error): void {
    if (this.ready) return;
    this.ready = this.answered = true;
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

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.backend.resume();
  }

  /**
   * Not needed any more: drop what is queued, stop the statement if it still runs, and read on
   * to ReadyForQuery (`settled`). Idempotent.
   */
  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.queue.length = 0;
    this.resume();
    if (this.ready) return;
    this.stop();
    const timer = setTimeout(() => {
      if (!this.ready) this.backend.destroy(`a cancelled ${this.marks.what} did not end in time`);
    }, DRAIN_TIMEOUT_MS);
    void this.settled.then(() => clearTimeout(timer));
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterated) throw new Error('a node stream is read once');
    this.iterated = true;
    return {
      next: async (): Promise<IteratorResult<T>> => {
        for (;;) {
          const item = this.queue.shift();
          if (item !== undefined) {
            if (this.queue.length <= this.marks.low) this.resume();
            this.pulled(this.queue.length, false);
            if (item.kind === 'error') throw (item as { error: Error }).error;
            return { value: item as T, done: false };
          }
          if (this.ready || this.abandoned) return { value: undefined, done: true };
          this.pulled(0, true);
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
      },
      return: async (): Promise<IteratorResult<T>> => {
        this.abandon();
        return { value: undefined, done: true };
      },
    };
  }
}
