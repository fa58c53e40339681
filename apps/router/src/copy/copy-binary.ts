// COPY's binary format (Postgres docs, "Binary Format"), both directions, pure: splitting a COPY
// FROM STDIN stream into its header, tuples (with the key field) and trailer, and joining the
// streams of several nodes' COPY TO STDOUT into one. Tuples are handed on as the bytes they came
// in; only field lengths and the key field are read.
import { ByteQueue } from './byte-queue.js';

/** The 11-byte signature every binary COPY stream starts with. */
export const BINARY_SIGNATURE = Buffer.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00,
]);
/** Signature, flags (int32), header extension length (int32). */
const FIXED_HEADER_BYTES = 19;
/** The file trailer: a field count of -1. */
export const BINARY_TRAILER = Buffer.from([0xff, 0xff]);
/** The header Postgres writes: signature, no flags, no extension. */
export const BINARY_HEADER = Buffer.concat([BINARY_SIGNATURE, Buffer.alloc(8)]);

export interface BinarySplitEvents {
  /**
   * Bytes every node's stream gets as they are: the client's header, its trailer, and all of a
   * stream whose header is malformed (then every node fails on it as Postgres would).
   */
  all(bytes: Buffer): void;
  /**
   * One whole tuple, its key field (null: SQL NULL) and the client's tuple number. False: the key
   * cannot be read (wrong length): the tuple and everything after go to `rest`.
   */
  tuple(bytes: Buffer, key: Buffer | null, line: number): boolean;
  /**
   * The client's bytes from a malformed tuple (or data after the trailer) on, for one node whose
   * COPY then fails exactly as Postgres's would. `line` (the client's tuple number where they
   * start) comes with the first piece only.
   */
  rest(bytes: Buffer, line: number | undefined): void;
}

type State = 'header' | 'extension' | 'tuples' | 'trailer' | 'broken' | 'rest';

type Scan =
  | { kind: 'more' }
  | { kind: 'malformed' }
  | { kind: 'trailer'; bytes: Buffer }
  | { kind: 'tuple'; bytes: Buffer; key: Buffer | null };

const MORE: Scan = { kind: 'more' };
const MALFORMED: Scan = { kind: 'malformed' };

/**
 * Reads a binary COPY stream's tuples off a queue one at a time, across pushes: a tuple is taken
 * only once all of it is there ('more' until then). Malformed: a field count other than
 * `fieldCount` (when given) or a field length below -1; its bytes stay in the queue.
 */
class TupleScanner {
  #fieldsLeft = -1;
  #count = 0;
  #scanned = 0;
  #keyAt = -1;
  #keyLength = -1;

  constructor(
    private readonly q: ByteQueue,
    private readonly fieldCount?: number,
    /** The field whose bytes come back as `key` (-1: none). */
    private readonly keyIndex = -1,
  ) {}

  /** Part of a tuple has been read. */
  get inTuple(): boolean {
    return this.#fieldsLeft >= 0;
  }

  next(): Scan {
    const q = this.q;
    if (this.#fieldsLeft < 0) {
      if (q.length < 2) return MORE;
      const count = q.int16At(0);
      if (count === -1) return { kind: 'trailer', bytes: q.take(2) };
      if (this.fieldCount !== undefined && count !== this.fieldCount) return MALFORMED;
      this.#fieldsLeft = this.#count = count;
      this.#scanned = 2;
      this.#keyAt = this.#keyLength = -1;
    }
    while (this.#fieldsLeft > 0) {
      if (q.length < this.#scanned + 4) return MORE;
      const length = q.int32At(this.#scanned);
      if (length < -1) {
        this.#fieldsLeft = -1;
        return MALFORMED;
      }
      const size = 4 + Math.max(length, 0);
      if (q.length < this.#scanned + size) return MORE;
      if (this.#count - this.#fieldsLeft === this.keyIndex) {
        this.#keyAt = this.#scanned + 4;
        this.#keyLength = length;
      }
      this.#scanned += size;
      this.#fieldsLeft--;
    }
    this.#fieldsLeft = -1;
    const bytes = q.take(this.#scanned);
    const key =
      this.#keyLength < 0 ? null : bytes.subarray(this.#keyAt, this.#keyAt + this.#keyLength);
    return { kind: 'tuple', bytes, key };
  }
}

/**
 * Feed it CopyData payloads with push(), then end() at CopyDone. `fieldCount`: the COPY's
 * columns; `keyIndex`: the key's place among them.
 */
export class BinaryCopySplitter {
  private readonly q = new ByteQueue();
  private state: State = 'header';
  private extensionLeft = 0;
  private line = 0;
  /** Scan of the tuple at the queue's head: bytes known so far, fields still to read. */
  private readonly tuples: TupleScanner;

  constructor(
    fieldCount: number,
    keyIndex: number,
    private readonly on: BinarySplitEvents,
  ) {
    this.tuples = new TupleScanner(this.q, fieldCount, keyIndex);
  }

  push(data: Buffer): void {
    if (data.length === 0) return;
    this.q.push(data);
    this.advance();
  }

  /** The data ended (CopyDone): what is left of an unfinished header or tuple goes on as it is. */
  end(): void {
    if (this.q.length === 0) return;
    const left = this.q.take(this.q.length);
    if (this.state === 'header' || this.state === 'broken') this.on.all(left);
    else this.toRest(left, this.line + 1);
  }

  private advance(): void {
    for (;;) {
      switch (this.state) {
        case 'header':
          if (!this.header()) return;
          continue;
        case 'extension': {
          const n = Math.min(this.q.length, this.extensionLeft);
          if (n > 0) this.on.all(this.q.take(n));
          this.extensionLeft -= n;
          if (this.extensionLeft > 0) return;
          this.state = 'tuples';
          continue;
        }
        case 'tuples':
          if (!this.tuple()) return;
          continue;
        case 'broken':
          if (this.q.length > 0) this.on.all(this.q.take(this.q.length));
          return;
        case 'trailer':
        case 'rest':
          if (this.q.length > 0) this.toRest(this.q.take(this.q.length), this.line);
          return;
      }
    }
  }

  /** The fixed header, checked as far as it has come; false when more bytes are needed. */
  private header(): boolean {
    const seen = Math.min(this.q.length, BINARY_SIGNATURE.length);
    for (let i = 0; i < seen; i++) {
      if (this.q.byteAt(i) !== BINARY_SIGNATURE[i]) {
        this.state = 'broken';
        return true;
      }
    }
    if (this.q.length < FIXED_HEADER_BYTES) return false;
    const extension = this.q.int32At(15);
    this.on.all(this.q.take(FIXED_HEADER_BYTES));
    if (extension < 0) {
      this.state = 'broken';
      return true;
    }
    this.extensionLeft = extension;
    this.state = 'extension';
    return true;
  }

  /** One tuple (or the trailer) if all of it is here; false when more bytes are needed. */
  private tuple(): boolean {
    const t = this.tuples.next();
    switch (t.kind) {
      case 'more':
        return false;
      case 'trailer':
        this.line++;
        this.on.all(t.bytes);
        this.state = 'trailer';
        return true;
      case 'malformed':
        this.line++;
        this.toRest(this.q.take(this.q.length), this.line);
        return false;
      case 'tuple':
        this.line++;
        if (!this.on.tuple(t.bytes, t.key, this.line)) {
          this.toRest(Buffer.concat([t.bytes, this.q.take(this.q.length)]), this.line);
          return false;
        }
        return true;
    }
  }

  private restStarted = false;

  private toRest(bytes: Buffer, line: number): void {
    if (bytes.length === 0 && this.restStarted) return;
    this.on.rest(bytes, this.restStarted ? undefined : line);
    this.restStarted = true;
    this.state = 'rest';
  }
}

/**
 * Joins the binary COPY TO streams of several nodes into one: the first header, every node's
 * tuples, one trailer (end()). Each node's stream is fed whole before the next one starts. `out`
 * gets one CopyData payload at a time, as Postgres frames them: a tuple each (the header with the
 * first), the trailer on its own.
 */
export class BinaryCopyJoiner {
  private readonly q = new ByteQueue();
  /** The header, sent with the next payload. */
  private header: Buffer | undefined;
  private headerLeft = FIXED_HEADER_BYTES;
  private extensionLeft = -1;
  private sentHeader = false;
  private ended = false;
  private readonly tuples = new TupleScanner(this.q);

  constructor(private readonly out: (bytes: Buffer) => void) {}

  /** A new node's stream starts: its header is dropped (the first one's was sent). */
  nextStream(): void {
    if (this.q.length > 0 || (this.tuples.inTuple && !this.ended))
      throw new BinaryCopyError('a node ended its binary COPY in the middle of a tuple');
    this.headerLeft = FIXED_HEADER_BYTES;
    this.extensionLeft = -1;
    this.ended = false;
  }

  /** Bytes of the current node's stream, in order. */
  push(data: Buffer): void {
    this.q.push(data);
    while (this.q.length > 0) {
      if (this.headerLeft > 0) {
        if (this.q.length < this.headerLeft) return;
        const header = this.q.take(this.headerLeft);
        this.headerLeft = 0;
        if (!header.subarray(0, BINARY_SIGNATURE.length).equals(BINARY_SIGNATURE))
          throw new BinaryCopyError('a node sent a binary COPY stream without its signature');
        this.extensionLeft = header.readInt32BE(15);
        // Postgres writes no header extension: the one sent is its 19 bytes.
        if (!this.sentHeader) this.header = Buffer.from(header);
        this.sentHeader = true;
        continue;
      }
      if (this.extensionLeft > 0) {
        const n = Math.min(this.extensionLeft, this.q.length);
        this.q.take(n);
        this.extensionLeft -= n;
        continue;
      }
      if (this.ended) throw new BinaryCopyError('a node sent data after its binary COPY trailer');
      if (!this.tuple()) return;
    }
  }

  private tuple(): boolean {
    const t = this.tuples.next();
    switch (t.kind) {
      case 'more':
        return false;
      case 'malformed':
        throw new BinaryCopyError('a node sent a binary COPY tuple with a field length below -1');
      case 'trailer':
        this.ended = true;
        return true;
      case 'tuple':
        this.emit(t.bytes);
        return true;
    }
  }

  private emit(payload: Buffer): void {
    const header = this.header;
    this.header = undefined;
    this.out(header === undefined ? payload : Buffer.concat([header, payload]));
  }

  /** Every node's stream is done: the header (if no node sent one) and the one trailer. */
  end(): void {
    if (this.q.length > 0 || this.tuples.inTuple)
      throw new BinaryCopyError('a node ended its binary COPY in the middle of a tuple');
    if (!this.sentHeader) this.header = BINARY_HEADER;
    this.emit(BINARY_TRAILER);
  }
}

/** A node's binary COPY TO stream that cannot be joined (never expected from Postgres). */
export class BinaryCopyError extends Error {
  override readonly name = 'BinaryCopyError';
}
