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
    const nul = body.indexOf(0, at);
    if (nul < 0)
      throw new ProtocolError(`invalid message format: unterminated string in ${this.what}`);
    this.offset = nul + 1;
    return body.toString('utf8', at, nul);
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
  const nul = body.indexOf(0, at);
  if (nul < 0) throw new ProtocolError(`invalid message format: unterminated string in ${what}`);
  return nul + 1;
}
