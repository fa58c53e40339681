// Bytes that arrive in chunks, read from the front: big-endian integers peeked at any offset
// across chunk boundaries, and a prefix taken off (a view into one chunk when it fits in one,
// else one copy). A stream is scanned without joining every chunk it arrived in. Pure.

export class ByteQueue {
  private chunks: Buffer[] = [];
  /** Bytes of chunks[0] already taken. */
  private offset = 0;
  /** Bytes not taken yet. */
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The byte at `at` (from the front); `at` < length. */
  byteAt(at: number): number {
    let i = at + this.offset;
    for (const c of this.chunks) {
      if (i < c.length) return c[i]!;
      i -= c.length;
    }
    throw new RangeError(`byte ${at} of ${this.length}`);
  }

  int16At(at: number): number {
    const first = this.chunks[0];
    const i = at + this.offset;
    if (first !== undefined && i + 2 <= first.length) return first.readInt16BE(i);
    return ((this.byteAt(at) << 24) | (this.byteAt(at + 1) << 16)) >> 16;
  }

  int32At(at: number): number {
    const first = this.chunks[0];
    const i = at + this.offset;
    if (first !== undefined && i + 4 <= first.length) return first.readInt32BE(i);
    return (
      (this.byteAt(at) << 24) |
      (this.byteAt(at + 1) << 16) |
      (this.byteAt(at + 2) << 8) |
      this.byteAt(at + 3)
    );
  }

  /** The first `n` bytes (n <= length), removed from the queue. */
  take(n: number): Buffer {
    if (n > this.length) throw new RangeError(`take ${n} of ${this.length}`);
    this.length -= n;
    const first = this.chunks[0];
    if (first !== undefined && this.offset + n <= first.length) {
      const out = first.subarray(this.offset, this.offset + n);
      this.offset += n;
      if (this.offset === first.length) this.drop();
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let done = 0;
    while (done < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length - this.offset, n - done);
      c.copy(out, done, this.offset, this.offset + k);
      done += k;
      this.offset += k;
      if (this.offset === c.length) this.drop();
    }
    return out;
  }

  private drop(): void {
    this.chunks.shift();
    this.offset = 0;
  }
}
