// A CancelRequest to a node, on a connection of its own as Postgres wants. Postgres signals the
// backend and closes that connection; a backend reading its next message when the signal comes
// (between two statements, or between a statement's Bind and Execute) ignores it. So a cancel sent
// just as a statement starts can be lost, and one that arrives late can stop the statement after.
import { connect } from 'node:net';
import { Writer, writeCancelRequest } from '@tessera/pg-wire';

/** Times a cancel is sent to a statement that goes on running (the first send included). */
export const CANCEL_TRIES = 4;

/** Pause before sending a cancel again, times the tries so far. */
export const CANCEL_RESEND_MS = 50;

/** Sends a CancelRequest for backend `pid`/`secret`; resolves when the node closed the connection (or after 5 s). */
export function sendCancelRequest(
  where: { readonly host: string; readonly port: number },
  pid: number,
  secret: number,
): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: where.host, port: where.port });
    const done = (): void => {
      socket.destroy();
      resolve();
    };
    socket.on('error', done);
    socket.on('close', done);
    socket.setTimeout(5000, done);
    socket.on('connect', () => socket.end(writeCancelRequest(new Writer(16), pid, secret).flush()));
  });
}
