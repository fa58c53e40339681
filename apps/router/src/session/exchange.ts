// One round of messages to a backend and the forwarding of its answers to the client. What the
// client is owed is a queue of expectations, one per message sent (STYLE.md: decide, then do):
// frames are matched against its head, forwarded as raw views, swallowed (the router's own
// messages), or preceded by synthetic frames for messages the router answered itself.
import {
  BackendCode,
  decodeCommandComplete,
  decodeErrorResponse,
  decodeReadyForQuery,
  type Frame,
  type NoticeFields,
  type TransactionStatus,
} from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Backend, BackendSink } from '../pool/backend.js';
import type { OutSink } from './client-out.js';

export type Expectation =
  /** A client Query: everything up to ReadyForQuery goes to the client, the ReadyForQuery if `ready`. */
  | { readonly t: 'query'; readonly ready: boolean }
  /** The router's own Query (BEGIN, settings replay, poison): everything swallowed. */
  | { readonly t: 'quiet' }
  /** One reply frame (ParseComplete, BindComplete, CloseComplete); `forward` false for the router's own Parse. */
  | { readonly t: 'one'; readonly forward: boolean; readonly unprepare?: string }
  /** Describe of a statement: ParameterDescription then RowDescription or NoData. */
  | { readonly t: 'describe_s' }
  /** Describe of a portal: RowDescription or NoData. */
  | { readonly t: 'describe_p' }
  /** Execute: rows until CommandComplete, PortalSuspended or EmptyQueryResponse. */
  | { readonly t: 'execute' }
  /** Sync: ReadyForQuery. */
  | { readonly t: 'sync' }
  /** The router's own failing Execute standing in for a refused statement: its error becomes `bytes`. */
  | { readonly t: 'poison'; readonly bytes: Buffer }
  /** Frames the router makes up, sent when they reach the head. */
  | { readonly t: 'synthetic'; readonly bytes: Buffer };

export interface ExchangeResult {
  /** Status of the last ReadyForQuery, if one came. */
  status: TransactionStatus | undefined;
  /** The first error forwarded to the client. */
  error: NoticeFields | undefined;
  /** Command tags the client saw (when `collectTags`). */
  tags: string[];
  /** The first error of the router's own statements (swallowed, not sent to the client). */
  quietError: NoticeFields | undefined;
}

export interface ExchangeHooks {
  /** The backend entered COPY IN for a forwarded statement: feed it the client's CopyData. */
  onCopyIn(): void;
  /** SQLSTATE of every error forwarded (metrics). */
  onError(sqlstate: string): void;
  /** The session the statement is for (a cancel waits for its turn on a shared backend). */
  readonly owner?: object;
  /**
   * Set when other sessions' statements are pipelined on the same backend: the client falling
   * behind then calls this instead of pausing the backend, which would stall them too.
   */
  readonly onLag?: () => void;
}

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
  const result: ExchangeResult = {
    status: undefined,
    error: undefined,
    tags: [],
    quietError: undefined,
  };
  return new Promise<ExchangeResult>((resolve, reject) => {
    let head = 0;
    let finished = false;
    // A run of forwarded frames contiguous in one buffer becomes one view.
    let runBuf: Buffer | undefined;
    let runStart = 0;
    let runEnd = 0;

    const finish = (): void => {
      if (finished) return;
      finished = true;
      backend.detach(sink);
      resolve(result);
    };
    const emitRun = (): void => {
      if (runBuf !== undefined) {
        out.push(Buffer.from(runBuf.buffer, runStart, runEnd - runStart));
        runBuf = undefined;
      }
    };
    const emit = (b: Buffer): void => {
      emitRun();
      out.push(b);
    };
    const forward = (f: Frame): void => {
      // A view of what the node sent, valid as long as it is held (FrameReader): no copy.
      const b = f.body;
      const start = b.byteOffset - 5;
      const end = b.byteOffset + b.length;
      if (runBuf !== undefined && runEnd === start && runBuf.buffer === b.buffer) {
        runEnd = end;
        return;
      }
      emitRun();
      runBuf = b;
      runStart = start;
      runEnd = end;
    };
    const emitSynthetic = (): void => {
      let e = expect[head];
      while (e !== undefined && e.t === 'synthetic') {
        emit(e.bytes);
        e = expect[++head];
      }
    };
    const flushOut = (): void => {
      emitRun();
      if (!out.flush()) {
        if (hooks.onLag !== undefined) return hooks.onLag();
        backend.pause();
        void out.drained().then(() => backend.resume());
      }
    };

    const sink: BackendSink = {
      owner: hooks.owner,
      onReadable(): void {
        try {
          for (let f = backend.nextFrame(); f; f = backend.nextFrame()) {
            handle(f);
            if (head >= expect.length) break;
          }
        } catch (e) {
          flushOut();
          backend.destroy('protocol error from node');
          fail(e as Error);
          return;
        }
        if (head >= expect.length) {
          // The caller adds its own frames (ReadyForQuery) and flushes once.
          emitRun();
          finish();
        } else {
          flushOut();
        }
      },
      onClosed(_b, error): void {
        flushOut();
        fail(error);
      },
    };
    const fail = (error: Error): void => {
      if (finished) return;
      finished = true;
      reject(
        error instanceof RouterError
          ? error
          : new RouterError(
              SQLSTATE.connectionFailure,
              `the connection to node "${backend.target.node}" was lost: ${error.message}`,
            ),
      );
    };

    const handle = (f: Frame): void => {
      const e = expect[head];
      if (e === undefined)
        throw new RouterError(
          SQLSTATE.connectionFailure,
          `node "${backend.target.node}" sent an unexpected message`,
        );
      const code = f.code;
      // Asynchronous messages may come at any point.
      if (
        code === BackendCode.NoticeResponse ||
        code === BackendCode.ParameterStatus ||
        code === BackendCode.NotificationResponse
      ) {
        if (e.t !== 'quiet' || code === BackendCode.NotificationResponse) forward(f);
        return;
      }
      if (code === BackendCode.ErrorResponse) {
        const fields = decodeErrorResponse(f.body);
        if (e.t === 'quiet') {
          result.quietError ??= fields;
          return;
        }
        if (e.t === 'poison') {
          emit(e.bytes);
        } else {
          result.error ??= fields;
          hooks.onError(fields.code);
          forward(f);
        }
        if (e.t === 'query') return;
        if (e.t === 'one' && e.unprepare !== undefined) backend.prepared.delete(e.unprepare);
        // The node now skips to the Sync; so do the expectations.
        while (head < expect.length && expect[head]!.t !== 'sync') {
          const skipped = expect[head]!;
          if (skipped.t === 'one' && skipped.unprepare !== undefined)
            backend.prepared.delete(skipped.unprepare);
          head++;
        }
        return;
      }
      switch (e.t) {
        case 'quiet':
          if (code === BackendCode.ReadyForQuery) {
            backend.status = decodeReadyForQuery(f.body);
            head++;
            emitSynthetic();
          }
          return;
        case 'query':
          if (code === BackendCode.ReadyForQuery) {
            backend.status = result.status = decodeReadyForQuery(f.body);
            if (e.ready) forward(f);
            head++;
            emitSynthetic();
            return;
          }
          if (code === BackendCode.CommandComplete && collectTags)
            result.tags.push(decodeCommandComplete(f.body));
          forward(f);
          if (code === BackendCode.CopyInResponse) {
            flushOut();
            hooks.onCopyIn();
          }
          return;
        case 'one':
          if (e.forward) forward(f);
          head++;
          emitSynthetic();
          return;
        case 'describe_s':
          forward(f);
          if (code !== BackendCode.ParameterDescription) {
            head++;
            emitSynthetic();
          }
          return;
        case 'describe_p':
          forward(f);
          head++;
          emitSynthetic();
          return;
        case 'execute':
          forward(f);
          if (
            code === BackendCode.CommandComplete ||
            code === BackendCode.PortalSuspended ||
            code === BackendCode.EmptyQueryResponse
          ) {
            if (code === BackendCode.CommandComplete && collectTags)
              result.tags.push(decodeCommandComplete(f.body));
            head++;
            emitSynthetic();
          } else if (code === BackendCode.CopyInResponse) {
            flushOut();
            hooks.onCopyIn();
          }
          return;
        case 'sync':
          if (code !== BackendCode.ReadyForQuery) {
            forward(f);
            return;
          }
          backend.status = result.status = decodeReadyForQuery(f.body);
          forward(f);
          head++;
          emitSynthetic();
          return;
        case 'poison':
          // Whatever the poison answers before its error is the router's own business.
          return;
        case 'synthetic':
          // emitSynthetic keeps synthetic entries off the head.
          throw new Error('unreachable: synthetic expectation at head');
      }
    };

    emitSynthetic();
    if (head >= expect.length) {
      resolve(result);
      finished = true;
      return;
    }
    backend.attach(sink);
    backend.write(messages);
  });
}
