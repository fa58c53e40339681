// One node's part of a COPY TO STDOUT across nodes: sends its COPY on a backend and hands on the
// node's answer frame by frame (CopyOutResponse, each CopyData as a view of what the node sent,
// the COPY n tag; an ErrorResponse is thrown as the node's own error). The node's socket pauses
// while its frames wait unread (node-stream.ts), so nodes started together are read one after
// another without holding a whole table in memory. Abandoned early, the COPY is cancelled and the
// backend drained to ReadyForQuery before it is reused.
import { BackendCode, decodeCommandComplete, frameBytes } from '@tessera/pg-wire';
import type { Backend } from '../pool/backend.js';
import { NodeStream } from './node-stream.js';

/** Frames queued before the node's socket is paused, and the mark at which it resumes. */
const MARKS = { high: 512, low: 128, what: 'COPY across nodes' } as const;

export type CopyOutFrame =
  | { readonly kind: 'response'; readonly frame: Buffer }
  /** `frame`: the whole CopyData message; `data`: its payload. */
  | { readonly kind: 'data'; readonly frame: Buffer; readonly data: Buffer }
  | { readonly kind: 'complete'; readonly tag: string };

export class CopyOutRun extends NodeStream<CopyOutFrame> {
  /** `messages`: `quiet` leading simple Queries whose answers are swallowed, then the COPY. */
  constructor(backend: Backend, messages: readonly Buffer[], quiet: number) {
    super(backend, messages, quiet, MARKS);
  }

  protected handle(code: number, body: Buffer): void {
    switch (code) {
      case BackendCode.CopyOutResponse:
        return this.push({ kind: 'response', frame: frameOf(body) });
      case BackendCode.CopyData:
        return this.push({ kind: 'data', frame: frameOf(body), data: body });
      case BackendCode.CommandComplete:
        this.answered = true;
        return this.push({ kind: 'complete', tag: decodeCommandComplete(body) });
      case BackendCode.ErrorResponse:
        return this.nodeError(body);
      case BackendCode.ReadyForQuery:
        return this.readyForQuery(body);
      default:
        // CopyDone, notices, ParameterStatus: nothing the router passes on from here.
        return;
    }
  }
}

/** The whole message whose body is `body` (a view: the slab it lies in is never reused). */
function frameOf(body: Buffer): Buffer {
  return frameBytes({ code: 0, body });
}
