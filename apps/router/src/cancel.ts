// CancelRequest support: every client gets a router-minted (pid, secret); a cancel arriving on a
// fresh connection is forwarded, with the backend's own key, to whatever runs that client's
// statement now.
import { randomInt } from 'node:crypto';
import { connect } from 'node:net';
import { Writer, writeCancelRequest } from '@tessera/pg-wire';
import type { Backend } from './pool/backend.js';

export interface Cancellable {
  readonly secret: number;
  /** Backends running this client's statements right now. */
  activeBackends(): Iterable<Backend>;
}

export class CancelRegistry {
  private readonly byPid = new Map<number, Cancellable>();

  /** A fresh pid (positive int32, unused) for a new client. */
  mintKey(): { pid: number; secret: number } {
    let pid: number;
    do pid = randomInt(1, 2 ** 31 - 1);
    while (this.byPid.has(pid));
    return { pid, secret: randomInt(-(2 ** 31), 2 ** 31 - 1) };
  }

  register(pid: number, session: Cancellable): void {
    this.byPid.set(pid, session);
  }

  unregister(pid: number): void {
    this.byPid.delete(pid);
  }

  /** Forwards a cancel; a wrong pid or secret is ignored silently, as Postgres does. */
  cancel(pid: number, secret: number): void {
    const s = this.byPid.get(pid);
    if (!s || s.secret !== secret) return;
    for (const b of s.activeBackends()) sendCancel(b);
  }
}

function sendCancel(b: Backend): void {
  const socket = connect({ host: b.target.host, port: b.target.port });
  socket.on('error', () => socket.destroy());
  socket.on('connect', () =>
    socket.end(writeCancelRequest(new Writer(16), b.pid, b.secret).flush()),
  );
  socket.setTimeout(5000, () => socket.destroy());
}
