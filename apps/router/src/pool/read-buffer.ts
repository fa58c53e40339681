// Where backend and client sockets read into (net.Socket `onread`): one buffer shared by every
// socket, the bytes of each read copied at once into a slab that is only ever appended to. A read
// then costs a small copy instead of an ArrayBuffer of its own and a trip through Readable, and
// views of what was read stay valid however long they are held (FrameReader hands them out;
// exchange.ts forwards them to clients without copying).
import type { OnReadOpts } from 'node:net';
import { viewOf } from '@tessera/pg-wire';

/** Largest single read. */
const READ_BYTES = 64 * 1024;
/** Slab size: four reads of the largest size. */
const SLAB_BYTES = 4 * READ_BYTES;

/** Safe to share: a socket's read callback runs right after its read, before any other read. */
const readBuffer = Buffer.allocUnsafeSlow(READ_BYTES);
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
/** The slab's memory (its own ArrayBuffer, from offset 0), read once per slab. */
let slabMemory = slab.buffer;
let used = 0;

/**
 * `onread` options for a backend or client socket (client-socket.ts): `onBytes` gets what each
 * read brought, kept.
 */
export function readInto(onBytes: (chunk: Buffer) => void): OnReadOpts {
  return {
    buffer: readBuffer,
    callback: (n) => {
      onBytes(keep(n));
      return true; // pausing is the caller's business (Backend.pause)
    },
  };
}

/** The `n` bytes just read, copied where nothing will overwrite them. */
function keep(n: number): Buffer {
  if (SLAB_BYTES - used < n) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabMemory = slab.buffer;
    used = 0;
  }
  readBuffer.copy(slab, used, 0, n);
  const out = viewOf(slabMemory, used, n);
  used += n;
  return out;
}
