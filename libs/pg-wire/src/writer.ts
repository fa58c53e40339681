// A growable byte writer that builds one or many frames in a single buffer, so a batch of
// messages (ParseComplete, BindComplete, DataRow..., ReadyForQuery) leaves in one socket write.
// `begin(code)` reserves the header; `end()` patches in the length once the body is known.

const EMPTY = Buffer.alloc(0);

export class Writer {
  private buf: Buffer = EMPTY;
  private pos = 0;
  /** Where the open frame's length word sits, or -1 when no frame is open. */
  private lengthAt = -1;

  constructor(private readonly initialSize = 1024) {}

  /** Bytes written so far (all frames, open one included). */
  get length(): number {
    return this.pos;
  }

  private ensure(n: number): void {
    if (this.buf.length - this.pos >= n) return;
    let size = Math.max(this.initialSize, this.buf.length * 2);
    while (size - this.pos < n) size *= 2;
    // allocUnsafe: every byte up to pos is about to be copied or written.
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Starts a frame with type byte `code`, or an untyped startup packet if `code` is omitted. */
  begin(code?: number): this {
    if (this.lengthAt >= 0) throw new Error('Writer.begin: previous frame not ended');
    this.ensure(5);
    if (code !== undefined) this.buf[this.pos++] = code;
    this.lengthAt = this.pos;
    this.pos += 4;
    return this;
  }

  /** Ends the open frame by writing its length (which counts the length word, not the type byte). */
  end(): this {
    const at = this.lengthAt;
    if (at < 0) throw new Error('Writer.end: no frame open');
    this.buf.writeInt32BE(this.pos - at, at);
    this.lengthAt = -1;
    return this;
  }

  int8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v;
    return this;
  }

  int16(v: number): this {
    this.ensure(2);
    // The low 16 bits: counts up to 65535 and negative values (-1) both encode as Postgres reads them.
    this.buf.writeUInt16BE(v & 0xffff, this.pos);
    this.pos += 2;
    return this;
  }

  int32(v: number): this {
    this.ensure(4);
    this.buf.writeInt32BE(v | 0, this.pos);
    this.pos += 4;
    return this;
  }

  /** Unsigned 32-bit, for type OIDs above 2^31. */
  uint32(v: number): this {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
    return this;
  }

  /** UTF-8 bytes of `s` without terminator. */
  string(s: string): this {
    // 3 bytes per UTF-16 unit bounds the UTF-8 size without measuring the string first.
    this.ensure(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    return this;
  }

  /**
   * A NUL-terminated string. A NUL inside `s` would end the field early and let the rest be read
   * as further fields, so it is refused.
   */
  cstring(s: string): this {
    if (s.indexOf('\0') !== -1)
      throw new TypeError('Writer.cstring: string contains a NUL character');
    this.ensure(s.length * 3 + 1);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.buf[this.pos++] = 0;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /**
   * Everything written, handed over to the caller (not copied), and the writer starts empty.
   * The returned buffer is never touched again by the writer, so it is safe to pass to
   * socket.write.
   */
  flush(): Buffer {
    if (this.lengthAt >= 0) throw new Error('Writer.flush: frame not ended');
    const out = this.buf.subarray(0, this.pos);
    this.buf = EMPTY;
    this.pos = 0;
    return out;
  }

  /** Drops everything written (e.g. after an encoder threw half-way through a frame). */
  reset(): void {
    this.pos = 0;
    this.lengthAt = -1;
  }
}
