// Splits a byte stream into protocol frames. One reader per connection, reused for its whole
// life; a read cursor walks the received chunks, so a frame costs no copy and no allocation
// beyond the small `{ code, body }` object; bodies are views into what was received.
import { ProtocolError } from './errors.js';
import { viewOf } from './views.js';

/** One message: its type byte and a view of its body (the bytes after the length word). */
export interface Frame {
  readonly code: number;
  readonly body: Buffer;
}

/**
 * A frame with a view of its whole bytes too (type byte and length word included). The body view
 * is made on first use: most forwarded messages are only ever written on as `raw`.
 */
export class WholeFrame implements Frame {
  private view: Buffer | undefined = undefined;

  /** `raw` lies in `memory` from `at`. */
  constructor(
    readonly code: number,
    readonly raw: Buffer,
    private readonly memory: ArrayBufferLike,
    private readonly at: number,
  ) {}

  /** A message made up whole (not read from a stream). */
  static of(code: number, raw: Buffer): WholeFrame {
    return new WholeFrame(code, raw, raw.buffer, raw.byteOffset);
  }

  get body(): Buffer {
    return (this.view ??= viewOf(this.memory, this.at + 5, this.raw.length - 5));
  }
}

export interface FrameReaderOptions {
  /**
   * Largest accepted message length (the length word, which counts itself but not the type
   * byte). Default 1 GiB, as Postgres allows after login; use a much smaller one before the
   * peer has authenticated (`setMaxFrameLength`).
   */
  maxFrameLength?: number;
  /** Largest accepted startup packet, length word included. Default 10000, as Postgres. */
  maxStartupLength?: number;
}

export const DEFAULT_MAX_FRAME_LENGTH = 1 << 30;
export const DEFAULT_MAX_STARTUP_LENGTH = 10000;

const EMPTY = Buffer.alloc(0);

/**
 * Feed it chunks with `push`, then pull frames with `next` (or `readStartup` for the untyped
 * first packet) until they return undefined.
 *
 * Copies: none for a frame that lies within one chunk (its body is a view of that chunk). A
 * frame that straddles chunks is assembled once into a buffer of exactly its size; the chunks
 * themselves are never copied or grown, so a steady stream costs one small copy per chunk
 * boundary, not a copy of every byte.
 *
 * Views: a frame's `body` stays valid for as long as it is held: the reader never writes into a
 * chunk it was given or into memory it has handed out, so views may be forwarded (written to
 * another socket) without a copy. The caller must not write into a chunk after pushing it (socket
 * chunks are never reused). Holding a view pins its whole chunk.
 *
 * Errors: a bad length throws ProtocolError (SQLSTATE 08P01) as soon as the header is in, before
 * anything is allocated for the claimed size. The stream is then out of sync; close it.
 */
export class FrameReader {
  /** The segment frames are read from: a pushed chunk, or an assembled straddling frame. */
  private buf: Buffer = EMPTY;
  /** `buf`'s memory and where `buf` starts in it, read once per segment (for views). */
  private memory: ArrayBufferLike = EMPTY.buffer;
  private memoryOffset = 0;
  /** Read cursor in `buf`. */
  private start = 0;
  /** Chunks pushed after `buf`, not yet read from (from index `head` on), and their total size.
   * An index rather than shift(), so a huge frame arriving in thousands of chunks stays O(n). */
  private queue: Buffer[] = [];
  private head = 0;
  private queued = 0;
  private maxFrameLength: number;
  private readonly maxStartupLength: number;
  /** The frame nextCode() returned last: its segment and start there, its memory and offset in
   * it (of the type byte), its size (type byte and length word included). */
  private frameBuf: Buffer = EMPTY;
  private frameStart = 0;
  frameMemory: ArrayBufferLike = EMPTY.buffer;
  frameAt = 0;
  frameSize = 0;

  constructor(opts: FrameReaderOptions = {}) {
    this.maxFrameLength = opts.maxFrameLength ?? DEFAULT_MAX_FRAME_LENGTH;
    this.maxStartupLength = opts.maxStartupLength ?? DEFAULT_MAX_STARTUP_LENGTH;
  }

  /** Changes the frame length limit, e.g. raised once the client has authenticated. */
  setMaxFrameLength(bytes: number): void {
    this.maxFrameLength = bytes;
  }

  /** Bytes received but not yet returned as frames. */
  get buffered(): number {
    return this.buf.length - this.start + this.queued;
  }

  /** Appends a chunk (kept as is, never written into). */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.start === this.buf.length && this.queued === 0) {
      this.setBuf(chunk);
      this.start = 0;
      if (this.head > 0) this.clearQueue();
    } else {
      this.queue.push(chunk);
      this.queued += chunk.length;
    }
  }

  /** The next complete typed frame, or undefined if more bytes are needed. */
  next(): Frame | undefined {
    if (!this.contiguous(5)) return undefined;
    const length = this.frameLength();
    if (!this.contiguous(length + 1)) return undefined;
    const start = this.start;
    this.start = start + 1 + length;
    return {
      code: this.buf[start] as number,
      body: viewOf(this.memory, this.memoryOffset + start + 5, length - 4),
    };
  }

  /** next(), with a view of the whole frame as well (for forwarding it as it came). */
  nextWhole(): WholeFrame | undefined {
    if (!this.contiguous(5)) return undefined;
    const length = this.frameLength();
    if (!this.contiguous(length + 1)) return undefined;
    const start = this.start;
    this.start = start + 1 + length;
    const at = this.memoryOffset + start;
    return new WholeFrame(
      this.buf[start] as number,
      viewOf(this.memory, at, length + 1),
      this.memory,
      at,
    );
  }

  /**
   * next() without making anything: the type byte of the next complete frame, or -1 if more bytes
   * are needed. Until the next call, the frame is `frameSize` bytes of `frameMemory` from
   * `frameAt` (valid as long as held, as views are), its body made on demand by frameBody() and
   * single bytes read by frameByte(). For a reader that forwards most frames without a look.
   */
  nextCode(): number {
    if (!this.contiguous(5)) return -1;
    const length = this.frameLength();
    if (!this.contiguous(length + 1)) return -1;
    const start = this.start;
    this.start = start + 1 + length;
    this.frameBuf = this.buf;
    this.frameStart = start;
    this.frameMemory = this.memory;
    this.frameAt = this.memoryOffset + start;
    this.frameSize = length + 1;
    return this.buf[start] as number;
  }

  /** The body of the frame nextCode() returned last, as a view. */
  frameBody(): Buffer {
    return viewOf(this.frameMemory, this.frameAt + 5, this.frameSize - 5);
  }

  /** Byte `i` of the frame nextCode() returned last (0 is its type byte, 5 its body's first). */
  frameByte(i: number): number {
    return this.frameBuf[this.frameStart + i] as number;
  }

  /**
   * The next untyped startup-phase packet (StartupMessage, SSLRequest, GSSENCRequest,
   * CancelRequest): its body after the length word, starting with the int32 request code; or
   * undefined if more bytes are needed. Call it only where the protocol expects such a packet.
   */
  readStartup(): Buffer | undefined {
    if (!this.contiguous(4)) return undefined;
    const length = this.buf.readInt32BE(this.start);
    // 8 = the length word plus the request code; nothing shorter is a startup packet.
    if (length < 8 || length > this.maxStartupLength) {
      throw new ProtocolError(`invalid startup packet length ${length}`);
    }
    if (!this.contiguous(length)) return undefined;
    const start = this.start;
    this.start = start + length;
    return this.buf.subarray(start + 4, start + length);
  }

  /**
   * Whatever has been received but not consumed (a copy only if it spans chunks). Used when a
   * connection changes hands, e.g. bytes that followed an SSLRequest.
   */
  takeBuffered(): Buffer {
    const first = this.buf.subarray(this.start);
    const rest = this.queued === 0 ? first : Buffer.concat([first, ...this.queue.slice(this.head)]);
    this.setBuf(EMPTY);
    this.start = 0;
    this.clearQueue();
    return rest;
  }

  /** The length word of the frame at the cursor (its 5-byte header is in), checked. */
  private frameLength(): number {
    const length = this.buf.readInt32BE(this.start + 1);
    if (length < 4 || length > this.maxFrameLength) {
      throw new ProtocolError(
        length < 4
          ? `invalid message length ${length}`
          : `message length ${length} exceeds the limit of ${this.maxFrameLength}`,
      );
    }
    return length;
  }

  private setBuf(b: Buffer): void {
    this.buf = b;
    this.memory = b.buffer;
    this.memoryOffset = b.byteOffset;
  }

  private clearQueue(): void {
    this.queue = [];
    this.head = 0;
    this.queued = 0;
  }

  /**
   * Makes the next `n` unread bytes contiguous in `buf`, or returns false if fewer than `n`
   * have arrived. Moves on to the next chunk without copying when `buf` is used up; copies only
   * when the `n` bytes straddle chunks, into a buffer of exactly `n` bytes.
   */
  private contiguous(n: number): boolean {
    let have = this.buf.length - this.start;
    if (have === 0 && this.queued > 0) {
      this.setBuf(this.queue[this.head++] as Buffer);
      this.start = 0;
      this.queued -= this.buf.length;
      have = this.buf.length;
      if (this.queued === 0) this.clearQueue();
    }
    if (have >= n) return true;
    if (have + this.queued < n) return false;
    const out = Buffer.allocUnsafe(n);
    this.buf.copy(out, 0, this.start);
    let filled = have;
    while (filled < n) {
      const chunk = this.queue[this.head] as Buffer;
      const take = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, take);
      filled += take;
      this.queued -= take;
      if (take === chunk.length) this.head++;
      else this.queue[this.head] = chunk.subarray(take);
    }
    if (this.queued === 0) this.clearQueue();
    this.setBuf(out);
    this.start = 0;
    return true;
  }
}

/**
 * The whole frame as received (type byte, length, body) for forwarding without re-encoding:
 * the header always sits just before the body in the same memory.
 */
export function frameBytes(frame: Frame): Buffer {
  const b = frame.body;
  return viewOf(b.buffer, b.byteOffset - 5, b.length + 5);
}
