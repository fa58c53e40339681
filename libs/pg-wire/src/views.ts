// Buffers over memory that is already there, made for every frame received. Buffer.subarray
// asks the parent for its `.buffer` (a call into C++) and adjusts its arguments on every call;
// with the memory read once per chunk, Buffer.from(memory, offset, length) makes the same view
// for about half the cost here.

/** A Buffer viewing `length` bytes of `memory` from `offset`; no copy. */
export function viewOf(memory: ArrayBufferLike, offset: number, length: number): Buffer {
  return Buffer.from(memory as ArrayBuffer, offset, length);
}
