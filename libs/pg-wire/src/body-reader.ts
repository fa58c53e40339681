// A bounds-checked cursor over one message body, for the decoders. Every read checks the
// remaining length first, so a truncated or lying body throws ProtocolError, never RangeError.
import { ProtocolError, truncated } from './errors.js';

export class BodyReader {
  offset = 0;
  constructor(
    readonly body: Buffer,
    /** Message name used in error text. */
    readonly what: string,
  ) {}

  get remaining(): number {
    return this.body.length - this.offset;
  }

  private need(n: number): number {
    const at = this.offset;
    if (this.body.length - at < n) throw truncated(this.what);
    this.offset = at + n;
    return at;
  }

  byte(): number {
    return this.body[this.need(1)] as number;
  }

  int16(): number {
    return this.body.readInt16BE(this.need(2));
  }

  /** Counts in the protocol (parameters, formats, columns) are unsigned 16-bit, as Postgres reads them. */
  uint16(): number {
    return this.body.readUInt16BE(this.need(2));
  }

  int32(): number {
    return this.body.readInt32BE(this.need(4));
  }

  /** Type OIDs are unsigned 32-bit. */
  uint32(): number {
    return this.body.readUInt32BE(this.need(4));
  }

  /** A NUL-terminated UTF-8 string. */
  cstring(): string {
    const body = this.body;
    const at = this.offset;
    const nul = findNul(body, at);
    if (nul < 0)
      throw new ProtocolError(`invalid message format: unterminated string in ${this.what}`);
    this.offset = nul + 1;
    return utf8Text(body, at, nul);
  }

  /** A view of the next `n` bytes. */
  view(n: number): Buffer {
    if (n < 0) throw new ProtocolError(`invalid message format: negative length in ${this.what}`);
    const at = this.need(n);
    return this.body.subarray(at, at + n);
  }

  /** A view of everything left. */
  rest(): Buffer {
    const at = this.offset;
    this.offset = this.body.length;
    return this.body.subarray(at);
  }

  /** Postgres rejects a message with bytes after its last field; so do we. */
  done(): void {
    if (this.offset !== this.body.length) {
      throw new ProtocolError(`invalid message format: trailing bytes in ${this.what}`);
    }
  }
}

/** Offset just past the NUL ending the string at `at` (for skipping names cheaply). */
export function skipCString(body: Buffer, at: number, what: string): number {
  const nul = findNul(body, at);
  if (nul < 0) throw new ProtocolError(`invalid message format: unterminated string in ${what}`);
  return nul + 1;
}

/** Bytes searched in JS before asking Buffer.indexOf (a call into C++, worth it only when long). */
const SHORT_SCAN = 64;

/** Index of the first NUL at or after `at`, or -1 (names and tags are short; SQL may not be). */
export function findNul(body: Buffer, at: number): number {
  const len = body.length;
  const stop = Math.min(len, at + SHORT_SCAN);
  for (let i = at; i < stop; i++) if (body[i] === 0) return i;
  return stop < len ? body.indexOf(0, stop) : -1;
}

/** Longest text decoded in JS; beyond it (or at the first non-ASCII byte) Buffer.toString does. */
const SHORT_TEXT = 32;

/** body[start, end) as UTF-8 text; short ASCII (statement names, portals, tags) without C++. */
export function utf8Text(body: Buffer, start: number, end: number): string {
  if (end - start > SHORT_TEXT) return body.toString('utf8', start, end);
  let s = '';
  for (let i = start; i < end; i++) {
    const c = body[i]!;
    if (c >= 0x80) return body.toString('utf8', start, end);
    s += String.fromCharCode(c);
  }
  return s;
}
