// CancelRequest support: every client gets a router-minted (pid, secret); a cancel arriving on a
// fresh connection is forwarded, with the backend's own key, to whatever runs that client's
// statement now (in whichever worker process holds that client).
import { randomInt } from 'node:crypto';
import type { Backend } from './pool/backend.js';

export interface Cancellable {
  readonly secret: number;
  /** Backends running this client's statements right now. */
  activeBackends(): Iterable<Backend>;
  /** Ends the wait of a statement held for a later catalog epoch, if one waits. */
  cancelWaiting?(): void;
}

/**
 * With several router processes on one port (--workers), a cancel may land on any of them: the
 * pid says which worker owns the session (pid % count = index), and another worker's cancel is
 * handed to `forward` (the primary relays it over IPC).
 */
export interface CancelWorkers {
  readonly index: number;
  readonly count: number;
  forward(worker: number, pid: number, secret: number): void;
}

export class CancelRegistry {
  private readonly byPid = new Map<number, Cancellable>();

  constructor(private readonly workers?: CancelWorkers) {}

  /** The worker whose session a (router-minted) pid belongs to. */
  static workerOf(pid: number, count: number): number {
    return pid % count;
  }

  /** A fresh pid (positive int32, unused, owned by this worker) for a new client. */
  mintKey(): { pid: number; secret: number } {
    const count = this.workers?.count ?? 1;
    const index = this.workers?.index ?? 0;
    const slots = Math.floor((2 ** 31 - 2) / count);
    let pid: number;
    do pid = randomInt(0, slots) * count + index;
    while (pid === 0 || this.byPid.has(pid));
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
    const w = this.workers;
    if (w !== undefined && w.count > 1 && pid > 0) {
      const owner = CancelRegistry.workerOf(pid, w.count);
      if (owner !== w.index) return w.forward(owner, pid, secret);
    }
    this.cancelLocal(pid, secret);
  }

  /** A cancel for a session of this process (also one relayed from another worker). */
  cancelLocal(pid: number, secret: number): void {
    const s = this.byPid.get(pid);
    if (!s || s.secret !== secret) return;
    s.cancelWaiting?.();
    for (const b of s.activeBackends()) b.cancelFor(s);
  }
}
