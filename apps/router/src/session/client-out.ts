// The client socket's write side: pieces gathered while one backend chunk (or one local answer)
// is handled leave in one write, so a round trip costs as few syscalls as possible.
import type { Socket } from 'node:net';
import { writePieces } from '../socket-write.js';

/** Where an exchange puts the frames meant for the client. */
export interface OutSink {
  push(b: Buffer): void;
  /** False when the destination is over its mark (pause the source until drained()). */
  flush(): boolean;
  drained(): Promise<void>;
  /** Writes what was gathered even while corked: the client must answer it (COPY data). */
  flushForInput?(): void;
}

/** Keeps the frames (for a result that is sent only if every node succeeds), or drops them. */
export class HeldOut implements OutSink {
  readonly pieces: Buffer[] = [];
  constructor(private readonly keep: boolean) {}
  push(b: Buffer): void {
    // Views of a backend's chunk stay valid (chunks are never reused), so no copy is needed.
    if (this.keep) this.pieces.push(b);
  }
  flush(): boolean {
    return true;
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
}

/** What a corked output keeps at most; beyond it, it writes (a large result after DDL). */
const CORK_LIMIT = 1 << 20;

const keptBytes = (pieces: readonly Buffer[]): number => {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
};

export class ClientOut implements OutSink {
  private pieces: Buffer[] = [];
  /**
   * Message codes left out of what is pushed while set: a simple-protocol EXECUTE runs as an
   * extended Bind/Execute, whose BindComplete and NoData the simple protocol does not have.
   */
  omit: ReadonlySet<number> | undefined = undefined;

  /**
   * While set, flush() keeps what was gathered (up to CORK_LIMIT bytes) until uncork(): the
   * answer to DDL waits until the other routers were told of it (session/names.ts).
   */
  private corked = false;

  constructor(private readonly socket: Socket) {}

  cork(): void {
    this.corked = true;
  }

  get isCorked(): boolean {
    return this.corked;
  }

  uncork(): void {
    this.corked = false;
    this.flush();
  }

  flushForInput(): void {
    const corked = this.corked;
    this.corked = false;
    this.flush();
    this.corked = corked;
  }

  get closed(): boolean {
    return this.socket.destroyed || !this.socket.writable;
  }

  push(b: Buffer): void {
    if (this.omit === undefined) this.pieces.push(b);
    else this.pushKept(b);
  }

  /** `b` holds whole frames (forwarded runs or the router's own): only those not omitted go. */
  private pushKept(b: Buffer): void {
    let start = 0;
    let i = 0;
    while (i + 5 <= b.length) {
      const end = i + 1 + b.readInt32BE(i + 1);
      if (this.omit!.has(b[i]!)) {
        if (i > start) this.pieces.push(b.subarray(start, i));
        start = end;
      }
      i = end;
    }
    if (b.length > start) this.pieces.push(start === 0 ? b : b.subarray(start));
  }

  /** Writes what was gathered; false when the socket's buffer is over its mark (pause the source). */
  flush(): boolean {
    const pieces = this.pieces;
    if (pieces.length === 0) return !this.socket.writableNeedDrain;
    if (this.corked && keptBytes(pieces) < CORK_LIMIT) return true;
    this.pieces = [];
    if (this.closed) return true;
    return writePieces(this.socket, pieces);
  }

  /** Resolves when the socket drained (or closed). */
  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }
}
