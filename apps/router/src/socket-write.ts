// Gathered pieces leave in one system call: small ones joined into one buffer (one write(2), and
// less work in Node than a corked writev), big ones corked and written as they are, uncopied.
import type { Socket } from 'node:net';

/** Pieces up to this total are joined into one buffer before writing. */
const JOIN_MAX_BYTES = 16 * 1024;

/** Writes `pieces` in order; false when the socket's buffer is over its mark (wait for drain). */
export function writePieces(socket: Socket, pieces: readonly Buffer[]): boolean {
  if (pieces.length === 1) return socket.write(pieces[0]!);
  let total = 0;
  for (const b of pieces) total += b.length;
  if (total <= JOIN_MAX_BYTES) return socket.write(Buffer.concat(pieces, total));
  socket.cork();
  let ok = true;
  for (const b of pieces) ok = socket.write(b);
  socket.uncork();
  return ok;
}
