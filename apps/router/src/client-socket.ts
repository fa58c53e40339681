// Client connections read the way backend connections do (pool/read-buffer.ts): into one shared
// buffer, each read copied into an append-only slab, handed to a callback. Node offers `onread`
// only to sockets it creates for connect(); an accepted socket reads through Readable, which
// costs an ArrayBuffer and an event-emitter trip per read (~0.5-1 µs of CPU per statement here).
// So the accepted connection's handle is moved, before its first read, into a Socket made with
// `onread`. That leans on two long-standing Node internals (`socket._handle` and the `handle`
// constructor option, which cluster and child_process use), so it is checked once and skipped
// when they are not there: the connection then reads through Readable as before.
import { Socket } from 'node:net';
import { readInto } from './pool/read-buffer.js';

interface WithHandle {
  _handle: object | null;
}

/**
 * The socket to serve an accepted connection on: `accepted` moved into one that reads into
 * `onBytes` when `onread` is allowed (no TLS: a TLS session wraps the socket's reads itself) and
 * this Node can; otherwise `accepted` itself, resumed, read through 'data' events.
 */
export function acceptClient(
  accepted: Socket,
  onBytes: (chunk: Buffer) => void,
  onread: boolean,
): Socket {
  const adopted = onread ? adoptWithOnread(accepted, onBytes) : undefined;
  if (adopted !== undefined) return adopted;
  accepted.resume();
  return accepted;
}

/**
 * A socket over `accepted`'s connection whose reads go to `onBytes` (views that stay valid while
 * held) instead of 'data' events; `accepted` is then spent. Undefined when this Node cannot do it:
 * keep `accepted` and listen for 'data'. `accepted` must come from a server made with
 * `pauseOnConnect: true`, so that nothing was read from it yet.
 */
export function adoptWithOnread(
  accepted: Socket,
  onBytes: (chunk: Buffer) => void,
): Socket | undefined {
  const raw = accepted as unknown as WithHandle;
  const handle = raw._handle;
  if (handle === null || typeof handle !== 'object' || !('readStart' in handle)) return undefined;
  raw._handle = null;
  // Counted by the server as one of its connections until it closes: it closes now, without
  // its handle (nothing to close), so the count stays right; the new socket is not counted.
  accepted.destroy();
  return new Socket({
    handle,
    readable: true,
    writable: true,
    onread: readInto(onBytes),
  } as ConstructorParameters<typeof Socket>[0]);
}
