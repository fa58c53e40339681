// One round of messages to a backend and the forwarding of its answers to the client. What the
// client is owed is a queue of expectations, one per message sent (STYLE.md: decide, then do):
// frames are matched against its head, forwarded as raw views, swallowed (the router's own
// messages), or preceded by synthetic frames for messages the router answered itself.
import {
  BackendCode,
  decodeCommandComplete,
  decodeErrorResponse,
  readyForQueryStatus,
  type FrameReader,
  type NoticeFields,
  type TransactionStatus,
  viewOf,
} from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError, type Backend, type BackendSink } from '../pool/backend.js';
import type { OutSink } from '../session/client-out.js';
import type { Expectation } from './expectations.js';
import { syncRepFrame } from './sync-rep-cancel.js';

export {
  EXPECT_DESCRIBE_PORTAL,
  EXPECT_DESCRIBE_STATEMENT,
  EXPECT_EXECUTE,
  EXPECT_ONE,
  EXPECT_OWN_SYNC,
  EXPECT_SYNC,
  type Expectation,
} from './expectations.js';

export interface ExchangeResult {
  /** Status of the last ReadyForQuery, if one came. */
  status: TransactionStatus | undefined;
  /** The first error forwarded to the client. */
  error: NoticeFields | undefined;
  /** Which expectation that error answered (statements before it ran). */
  errorAt: number | undefined;
  /** Command tags the client saw (when `collectTags`). */
  tags: string[];
  /** The first error of the router's own statements (swallowed, not sent to the client). */
  quietError: NoticeFields | undefined;
}

export interface ExchangeHooks {
  /**
   * The backend entered COPY IN for a forwarded statement: feed it the client's CopyData. A
   * promise returned is waited for before the exchange settles.
   */
  onCopyIn(backend: Backend): Promise<void> | void;
  /** SQLSTATE of every error forwarded (metrics). */
  onError(sqlstate: string): void;
  /** The session the statement is for (a cancel waits for its turn on a shared backend). */
  readonly owner?: object;
  /**
   * Set when other sessions' statements are pipelined on the same backend: the client falling
   * behind then calls this instead of pausing the backend, which would stall them too.
   */
  readonly onLag?: () => void;
  /** The exchange is over, just before its promise settles; `failed` if the backend was lost. */
  readonly onEnd?: (backend: Backend, failed: boolean) => void;
}

/** Tags of an exchange that does not collect them: shared, never written. */
const NO_TAGS: string[] = [];

/**
 * Sends `messages` to `backend` and forwards its answers as `expect` says, until every
 * expectation is met. Rejects with RouterError 08006 if the backend dies first.
 */
export function exchange(
  backend: Backend,
  messages: readonly Buffer[],
  expect: readonly Expectation[],
  out: OutSink,
  hooks: ExchangeHooks,
  collectTags = false,
): Promise<ExchangeResult> {
  return new Promise<ExchangeResult>((resolve, reject) => {
    new Exchange(backend, expect, out, hooks, collectTags, resolve, reject).start(messages);
  });
}

/**
 * One exchange's state, and the backend's sink while it runs: one object per statement rather
 * than a closure per step (this runs for every statement; allocation is most of its cost).
 */
class Exchange implements BackendSink {
  readonly owner: object | undefined;
  readonly result: ExchangeResult;
  head = 0;
  private finished = false;
  /** A FATAL the node sent, before it closes the connection. */
  private fatal: NoticeFields | undefined = undefined;
  /** Feeding a COPY IN (hooks.onCopyIn): the exchange settles after it. */
  private pump: Promise<void> | undefined = undefined;
  // A run of forwarded frames contiguous in one buffer becomes one view.
  private runMemory: ArrayBufferLike | undefined = undefined;
  private runStart = 0;
  private runEnd = 0;
  syncRepCancelled = false; // the node cancelled a commit's wait for its replica (sync-rep-cancel.ts)

  constructor(
    readonly backend: Backend,
    private readonly expect: readonly Expectation[],
    private readonly out: OutSink,
    readonly hooks: ExchangeHooks,
    private readonly collectTags: boolean,
    private readonly resolve: (r: ExchangeResult) => void,
    private readonly reject: (e: Error) => void,
  ) {
    this.owner = hooks.owner;
    this.result = {
      status: undefined,
      error: undefined,
      errorAt: undefined,
      tags: collectTags ? [] : NO_TAGS,
      quietError: undefined,
    };
  }

  start(messages: readonly Buffer[]): void {
    this.emitSynthetic();
    if (this.head >= this.expect.length) {
      this.finished = true;
      this.settle(undefined);
      return;
    }
    this.backend.attach(this);
    try {
      this.backend.write(messages);
    } catch (e) {
      this.backend.detach(this);
      this.fail(e instanceof Error ? e : new Error(String(e)));
    }
  }

  onReadable(): void {
    const backend = this.backend;
    const reader = backend.reader;
    const n = this.expect.length;
    try {
      // Frames are looked into only where needed (errors, ReadyForQuery, tags): most are
      // forwarded as ranges of what the node sent.
      for (let code = reader.nextCode(); code !== -1; code = reader.nextCode()) {
        this.handle(code, reader);
        if (this.head >= n) break;
      }
    } catch (e) {
      this.flushOut();
      backend.destroy('protocol error from node');
      this.fail(e as Error);
      return;
    }
    if (this.head >= n) {
      // The caller adds its own frames (ReadyForQuery) and flushes once.
      this.emitRun();
      this.finish();
    } else {
      this.flushOut();
    }
  }

  onClosed(_b: Backend, error: Error): void {
    this.flushOut();
    this.fail(error);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.backend.detach(this);
    const pump = this.pump;
    if (pump === undefined) return this.settle(undefined);
    pump.then(
      () => this.settle(undefined),
      (e: unknown) => this.settle(e instanceof Error ? e : new Error(String(e))),
    );
  }

  private fail(error: Error): void {
    if (this.finished) return;
    this.finished = true;
    if (this.fatal !== undefined) return this.settle(new BackendError(this.fatal));
    this.settle(
      error instanceof RouterError
        ? error
        : new RouterError(
            SQLSTATE.connectionFailure,
            `the connection to node "${this.backend.target.node}" was lost: ${error.message}`,
          ),
    );
  }

  private settle(error: Error | undefined): void {
    this.hooks.onEnd?.(this.backend, error !== undefined);
    if (error === undefined) this.resolve(this.result);
    else this.reject(error);
  }

  private copyIn(): void {
    this.flushOut();
    this.out.flushForInput?.();
    const pump = this.hooks.onCopyIn(this.backend);
    if (pump !== undefined) this.pump = pump;
  }

  private emitRun(): void {
    const memory = this.runMemory;
    if (memory !== undefined) {
      this.out.push(viewOf(memory, this.runStart, this.runEnd - this.runStart));
      this.runMemory = undefined;
    }
  }

  emit(b: Buffer): void {
    this.emitRun();
    this.out.push(b);
  }

  /** Forwards the frame `reader` returned last: a view of what the node sent, no copy (FrameReader). */
  private forward(reader: FrameReader): void {
    const start = reader.frameAt;
    const end = start + reader.frameSize;
    const memory = reader.frameMemory;
    if (this.runEnd === start && this.runMemory === memory) {
      this.runEnd = end;
      return;
    }
    this.emitRun();
    this.runMemory = memory;
    this.runStart = start;
    this.runEnd = end;
  }

  private emitSynthetic(): void {
    const expect = this.expect;
    let e = expect[this.head];
    while (e !== undefined && e.t === 'synthetic') {
      this.emit(e.bytes);
      e = expect[++this.head];
    }
  }

  private flushOut(): void {
    this.emitRun();
    if (!this.out.flush()) {
      if (this.hooks.onLag !== undefined) return this.hooks.onLag();
      const backend = this.backend;
      backend.pause();
      void this.out.drained().then(() => backend.resume());
    }
  }

  /** The head expectation is met: the next one up, synthetic frames sent on the way. */
  private next(): void {
    this.head++;
    this.emitSynthetic();
  }

  /** The frame `reader` returned last, of type `code`. */
  private handle(code: number, reader: FrameReader): void {
    const e = this.expect[this.head];
    if (e === undefined)
      throw new RouterError(
        SQLSTATE.connectionFailure,
        `node "${this.backend.target.node}" sent an unexpected message`,
      );
    if (code === BackendCode.NoticeResponse || this.syncRepCancelled)
      if (syncRepFrame(this, code, reader, e.t === 'quiet'))
        return void (e.t === 'execute' && this.next());
    // Asynchronous messages may come at any point.
    if (
      code === BackendCode.NoticeResponse ||
      code === BackendCode.ParameterStatus ||
      code === BackendCode.NotificationResponse
    ) {
      if (e.t !== 'quiet' || code === BackendCode.NotificationResponse) this.forward(reader);
      return;
    }
    if (code === BackendCode.ErrorResponse) return this.error(e, reader);
    this.answer(e, code, reader);
  }

  /** An ErrorResponse while `e` is at the head: forwarded (or not), and the node skips to the Sync. */
  private error(e: Expectation, reader: FrameReader): void {
    const backend = this.backend;
    const result = this.result;
    const fields = decodeErrorResponse(reader.frameBody());
    if ((fields.severityNonLocalized ?? fields.severity) === 'FATAL') {
      // The node closes the connection next; the client gets it as a FATAL and is closed too.
      this.fatal = fields;
      return;
    }
    if (e.t === 'quiet') {
      result.quietError ??= fields;
      return;
    }
    if (e.t === 'poison') {
      this.emit(e.bytes);
      result.errorAt ??= this.head;
    } else {
      if (result.error === undefined) {
        result.error = fields;
        result.errorAt = this.head;
      }
      this.hooks.onError(fields.code);
      this.forward(reader);
    }
    if (e.t === 'query') return;
    if (e.t === 'one' && e.unprepare !== undefined) backend.prepared.delete(e.unprepare);
    // The node now skips to the Sync; so do the expectations.
    const expect = this.expect;
    while (this.head < expect.length && expect[this.head]!.t !== 'sync') {
      const skipped = expect[this.head]!;
      if (skipped.t === 'one' && skipped.unprepare !== undefined)
        backend.prepared.delete(skipped.unprepare);
      this.head++;
    }
  }

  /** Any other frame, of type `code`, for the head expectation `e`. */
  private answer(e: Expectation, code: number, reader: FrameReader): void {
    const backend = this.backend;
    const result = this.result;
    switch (e.t) {
      case 'quiet':
        if (code === BackendCode.ReadyForQuery) {
          backend.status = readyForQueryStatus(reader.frameSize, reader.frameByte(5));
          this.next();
        }
        return;
      case 'query':
        if (code === BackendCode.ReadyForQuery) {
          backend.status = result.status = readyForQueryStatus(
            reader.frameSize,
            reader.frameByte(5),
          );
          if (e.ready) this.forward(reader);
          this.next();
          return;
        }
        if (code === BackendCode.CommandComplete && this.collectTags)
          result.tags.push(decodeCommandComplete(reader.frameBody()));
        this.forward(reader);
        if (code === BackendCode.CopyInResponse) this.copyIn();
        return;
      case 'one':
        if (e.forward) this.forward(reader);
        this.next();
        return;
      case 'describe_s':
        if (code !== BackendCode.ParameterDescription) {
          this.forward(reader);
          this.next();
        } else if (e.noParams !== true) this.forward(reader);
        return;
      case 'describe_p':
        this.forward(reader);
        this.next();
        return;
      case 'execute':
        this.forward(reader);
        if (
          code === BackendCode.CommandComplete ||
          code === BackendCode.PortalSuspended ||
          code === BackendCode.EmptyQueryResponse
        ) {
          if (code === BackendCode.CommandComplete && this.collectTags)
            result.tags.push(decodeCommandComplete(reader.frameBody()));
          this.next();
        } else if (code === BackendCode.CopyInResponse) {
          this.copyIn();
        }
        return;
      case 'sync':
        if (code !== BackendCode.ReadyForQuery) {
          this.forward(reader);
          return;
        }
        backend.status = result.status = readyForQueryStatus(reader.frameSize, reader.frameByte(5));
        if (e.own !== true) this.forward(reader);
        this.next();
        return;
      case 'poison':
        // Whatever the poison answers before its error is the router's own business.
        return;
      case 'synthetic':
        // emitSynthetic keeps synthetic entries off the head.
        throw new Error('unreachable: synthetic expectation at head');
    }
  }
}
