// One node's part of a COPY TO STDOUT across nodes: sends its COPY on a backend and hands on the
// node's answer frame by frame (CopyOutResponse, each CopyData as a view of what the node sent,
// the COPY n tag; an ErrorResponse is thrown as the node's own error). The node's socket pauses
// while its frames wait unread, so nodes started together are read one after another without
// holding a whole table in memory. Abandoned early, the COPY is cancelled and the backend drained
// to ReadyForQuery before it is reused.
import {
  BackendCode,
  decodeCommandComplete,
  decodeErrorResponse,
  decodeReadyForQuery,
  frameBytes,
} from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError, type Backend, type BackendSink } from '../pool/backend.js';

/** Frames queued before the node's socket is paused, and the mark at which it resumes. */
const HIGH_FRAMES = 512;
const LOW_FRAMES = 128;
/** How long a cancelled node may take to reach ReadyForQuery before its connection is closed. */
const DRAIN_TIMEOUT_MS = 10_000;

export type CopyOutFrame =
  | { readonly kind: 'response'; readonly frame: Buffer }
  /** `frame`: the whole CopyData message; `data`: its payload. */
  | { readonly kind: 'data'; readonly frame: Buffer; readonly data: Buffer }
  | { readonly kind: 'complete'; readonly tag: string };

type Item = CopyOutFrame | { readonly kind: 'error'; readonly error: Error };

export class CopyOutRun implements AsyncIterable<CopyOutFrame> {
  /** Resolves once the backend is idle at ReadyForQuery (or dead). */
  readonly settled: Promise<void>;
  private settle!: () => void;
  private readonly queue: Item[] = [];
  private wake: (() => void) | undefined;
  private quietLeft: number;
  private answered = false;
  private ready = false;
  private paused = false;
  private abandoned = false;
  private cancelled: Promise<void> | undefined;

  /** `messages`: `quiet` leading simple Queries whose answers are swallowed, then the COPY. */
  constructor(
    readonly backend: Backend,
    private readonly messages: readonly Buffer[],
    quiet: number,
  ) {
    this.quietLeft = quiet;
    this.settled = new Promise<void>((resolve) => (this.settle = resolve));
  }

  start(): void {
    if (this.backend.dead) return this.fail(new Error('the connection closed'));
    this.backend.attach(this.sink);
    this.backend.write(this.messages);
  }

  private readonly sink: BackendSink = {
    onReadable: () => {
      try {
        for (let f = this.backend.nextFrame(); f; f = this.backend.nextFrame()) {
          this.handle(f.code, f.body);
          if (this.ready) break;
        }
      } catch (e) {
        this.backend.destroy('protocol error from node');
        return this.fail(e as Error);
      }
      if (!this.paused && !this.ready && this.queue.length >= HIGH_FRAMES) {
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
    switch (code) {
      case BackendCode.CopyOutResponse:
        return this.push({ kind: 'response', frame: frameOf(body) });
      case BackendCode.CopyData:
        return this.push({ kind: 'data', frame: frameOf(body), data: body });
      case BackendCode.CommandComplete:
        this.answered = true;
        return this.push({ kind: 'complete', tag: decodeCommandComplete(body) });
      case BackendCode.ErrorResponse:
        this.answered = true;
        return this.push({ kind: 'error', error: new BackendError(decodeErrorResponse(body)) });
      case BackendCode.ReadyForQuery:
        this.backend.status = decodeReadyForQuery(body);
        return this.finish();
      default:
        // CopyDone, notices, ParameterStatus: nothing the router passes on from here.
        return;
    }
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
    this.backend.detach();
    this.resume();
    this.notify();
    void (this.cancelled ?? Promise.resolve()).then(() => this.settle());
  }

  private fail(error: Error): void {
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

  /** Not needed any more: drop what is queued, cancel the COPY if it runs, drain. Idempotent. */
  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.queue.length = 0;
    this.resume();
    if (this.ready) return;
    if (!this.answered) this.cancelled = this.backend.sendCancel();
    const timer = setTimeout(() => {
      if (!this.ready) this.backend.destroy('a cancelled COPY across nodes did not end in time');
    }, DRAIN_TIMEOUT_MS);
    void this.settled.then(() => clearTimeout(timer));
  }

  [Symbol.asyncIterator](): AsyncIterator<CopyOutFrame> {
    return {
      next: async (): Promise<IteratorResult<CopyOutFrame>> => {
        for (;;) {
          const item = this.queue.shift();
          if (item !== undefined) {
            if (this.queue.length <= LOW_FRAMES) this.resume();
            if (item.kind === 'error') throw item.error;
            return { value: item, done: false };
          }
          if (this.ready || this.abandoned) return { value: undefined, done: true };
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
      },
      return: async (): Promise<IteratorResult<CopyOutFrame>> => {
        this.abandon();
        return { value: undefined, done: true };
      },
    };
  }
}

/** The whole message whose body is `body` (a view: the slab it lies in is never reused). */
function frameOf(body: Buffer): Buffer {
  return frameBytes({ code: 0, body });
}
