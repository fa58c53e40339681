// A pool of backends for one (node address, database, user): at most `size` connections, idle
// ones reused most-recently-used first, waiters served in arrival order. A backend that died or
// is left inside a transaction is never reused.
import { RouterError, SQLSTATE } from '../errors.js';
import { Backend, type BackendTarget } from './backend.js';
import type { ScramPassThrough } from './scram-pass-through.js';

/** How a caller waits for a busy pool (Pool.acquire). */
export interface AcquireWait {
  /** The client the wait is for: the wait ends at once when it goes away. */
  client?: WaitingClient | undefined;
  /** The setting the timeout came from, named in the error. */
  flag?: string | undefined;
}

/** Counts of waits for a busy pool, kept per node across its pools (metrics). */
export interface AcquireStats {
  waits: number;
  timeouts: number;
  /** Waits ended because the client went away. */
  abandoned: number;
}

/**
 * A client as a wait for a busy pool sees it: whether it is gone, and what it calls when it goes
 * (each wait's end). A Set rather than an AbortSignal: adding and removing an EventTarget
 * listener cost more than the rest of a wait, and a busy pool has a wait per transaction.
 */
export interface WaitingClient {
  readonly closed: boolean;
  readonly poolWaits: Set<() => void>;
}

const gone = (): RouterError =>
  new RouterError(SQLSTATE.connectionFailure, 'the client went away while waiting for a backend');

interface Waiter {
  resolve(b: Backend): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  /** Its turn came: from now on it is answered, whether or not its client goes. */
  served(): void;
  passThrough: ScramPassThrough | undefined;
}

/**
 * The lane name of a simple Query: it needs no statement prepared on the lane, only the same
 * session settings (Pool.lend).
 */
export const QUERY_LANE = '\0query';

/** A lane's reads per turn, as a multiple of the pipeline depth (Pool.makeLane). */
const LANE_TURNS_PER_DEPTH = 4;

/** A lane whose statement at the head has run this long is not joined while a backend is idle. */
const LANE_STALL_MS = 5;

/** Statements prepared on one backend before it is replaced rather than grown further. */
const MAX_PREPARED_PER_BACKEND = 2000;

export class Pool {
  private readonly idle: Backend[] = [];
  /** Backends lent to pipelined reads of several sessions at once (lend). */
  private readonly lanes: Backend[] = [];
  private readonly waiters: Waiter[] = [];
  /** Connections open or being opened. */
  private total = 0;
  busy = 0;
  closed = false;

  constructor(
    readonly target: BackendTarget,
    readonly size: number,
    private readonly connectTimeoutMs: number,
    readonly stats: AcquireStats = { waits: 0, timeouts: 0, abandoned: 0 },
  ) {}

  get idleCount(): number {
    return this.idle.length;
  }

  /**
   * `passThrough`: the acquiring client's SCRAM key, used if a new connection must log in. A wait
   * for a busy pool ends in 53300 after `timeoutMs` (the message names `wait.flag`, the setting
   * that chose it), or at once when `wait.client` goes away: then its turn goes to the next
   * waiter. A connection being opened is not abandoned: the caller gives back what arrives after
   * its client went.
   */
  acquire(
    timeoutMs: number,
    passThrough?: ScramPassThrough,
    wait: AcquireWait = {},
  ): Promise<Backend> {
    if (this.closed)
      return Promise.reject(
        new RouterError(SQLSTATE.connectionFailure, `node "${this.target.node}" moved; retry`),
      );
    const idle = this.tryAcquire();
    if (idle !== undefined) return Promise.resolve(idle);
    if (this.total < this.size) return this.open(passThrough);
    const { client, flag = '--acquire-timeout-ms' } = wait;
    if (client?.closed === true) return Promise.reject(gone());
    this.stats.waits++;
    return new Promise((resolve, reject) => {
      const leave = (e: Error): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        clearTimeout(waiter.timer);
        client?.poolWaits.delete(onGone);
        reject(e);
      };
      const onGone = (): void => {
        this.stats.abandoned++;
        leave(gone());
      };
      const waiter: Waiter = {
        resolve,
        reject: (e) => leave(e),
        served: () => {
          clearTimeout(waiter.timer);
          client?.poolWaits.delete(onGone);
        },
        timer: setTimeout(() => {
          this.stats.timeouts++;
          leave(
            new RouterError(
              SQLSTATE.tooManyConnections,
              `no backend connection to node "${this.target.node}" became free within ${timeoutMs} ms (pool of ${this.size} for database "${this.target.database}", user "${this.target.user}"; see --pool-size and ${flag})`,
            ),
          );
        }, timeoutMs),
        passThrough,
      };
      client?.poolWaits.add(onGone);
      this.waiters.push(waiter);
    });
  }

  /** An idle backend now, without waiting; undefined when none is idle (or the pool closed). */
  tryAcquire(): Backend | undefined {
    if (this.closed) return undefined;
    for (let b = this.idle.pop(); b; b = this.idle.pop()) {
      if (b.dead) {
        this.total--;
        continue;
      }
      this.busy++;
      return b;
    }
    return undefined;
  }

  /**
   * A backend for one pipelined read of statement `name` under settings `key`, without waiting.
   * Reads gather on lanes already open before they take an idle backend: the node then reads
   * several statements per wake-up and the router sends them in one write, cheaper for both (and
   * idle backends stay free for writes and transactions). A lane qualifies with room (< `depth`
   * in flight), turns left, the same settings and `name` prepared; the least busy one is taken.
   * While a backend is idle, a lane whose head statement has run for LANE_STALL_MS is passed over,
   * so one slow read holds up others only when every backend is busy. Undefined when nothing
   * qualifies: acquire() one and makeLane() it. Given back with giveBack().
   */
  lend(depth: number, name: string, key: string): Backend | undefined {
    const lane = this.bestLane(depth, name, key, Date.now() - LANE_STALL_MS);
    if (lane !== undefined) return this.join(lane);
    const idle = this.tryAcquire();
    if (idle !== undefined) {
      this.makeLane(idle, depth);
      return idle;
    }
    const any = this.bestLane(depth, name, key, -Infinity);
    return any === undefined ? undefined : this.join(any);
  }

  /** The qualifying lane with the fewest reads in flight whose head started after `headAfterMs`. */
  private bestLane(
    depth: number,
    name: string,
    key: string,
    headAfterMs: number,
  ): Backend | undefined {
    let best: Backend | undefined;
    for (const l of this.lanes) {
      if (l.dead || l.inFlight >= depth || l.laneTurnsLeft <= 0 || l.cancelsInFlight > 0) continue;
      if (best !== undefined && l.inFlight >= best.inFlight) continue;
      if (l.headSinceMs < headAfterMs) continue;
      if (l.settingsKey !== key) continue;
      if (name === QUERY_LANE || (l.prepared.has(name) && !l.parsing.has(name))) best = l;
    }
    return best;
  }

  private join(lane: Backend): Backend {
    lane.inFlight++;
    lane.laneTurnsLeft--;
    return lane;
  }

  /**
   * Opens `b` (just acquired) to pipelined reads. A lane takes a bounded number of reads
   * (LANE_TURNS_PER_DEPTH x depth) and then drains back to the pool, so that clients waiting for a
   * backend of their own (a write, a transaction) are served in turn.
   */
  makeLane(b: Backend, depth: number): void {
    b.inFlight = 1;
    b.laneTurnsLeft = LANE_TURNS_PER_DEPTH * depth - 1;
    this.lanes.push(b);
  }

  /** A lent backend's read is answered; the last one out gives the backend back to the pool. */
  giveBack(b: Backend): void {
    if (--b.inFlight > 0) return;
    const i = this.lanes.indexOf(b);
    if (i >= 0) this.lanes.splice(i, 1);
    this.release(b);
  }

  private open(passThrough: ScramPassThrough | undefined): Promise<Backend> {
    this.total++;
    this.busy++;
    return Backend.connect(this.target, this.connectTimeoutMs, passThrough).catch((e: unknown) => {
      this.total--;
      this.busy--;
      // A waiter may now be able to open its own connection (and see the same error, or not).
      this.serveWaiter();
      throw e;
    });
  }

  /**
   * `b`, acquired, is kept by its session for state that cannot be pooled: it no longer counts
   * against the pool's size, so other clients are served meanwhile, and it is closed when given
   * back (pinBack first if the state is gone).
   */
  pinOut(b: Backend): void {
    if (b.pinnedOut) return;
    b.pinnedOut = true;
    this.busy--;
    this.total--;
    this.serveWaiter();
  }

  /** `b`'s session state is gone: it counts in the pool again and may be reused. */
  pinBack(b: Backend): void {
    if (!b.pinnedOut) return;
    b.pinnedOut = false;
    this.busy++;
    this.total++;
  }

  /**
   * Takes a backend back, once no cancel is on its way to it. Dead ones, ones inside a
   * transaction, and bloated ones are closed.
   */
  release(b: Backend): void {
    // A cancel still on its way could stop the next client's statement instead.
    if (b.cancelsInFlight > 0) return b.whenCancelsDelivered(() => this.release(b));
    b.idleOwner = undefined;
    if (b.pinnedOut) {
      // Another client must never get it: closing it drops the state on the node.
      b.pinnedOut = false;
      b.detach();
      if (!b.dead) b.close();
      return;
    }
    this.busy--;
    b.detach();
    if (
      b.dead ||
      b.status !== 'I' ||
      this.closed ||
      b.prepared.size > MAX_PREPARED_PER_BACKEND ||
      this.total > this.size
    ) {
      if (!b.dead) b.close();
      this.total--;
      this.serveWaiter();
      return;
    }
    b.lastUsedMs = Date.now();
    const w = this.waiters.shift();
    if (w) {
      w.served();
      this.busy++;
      w.resolve(b);
      return;
    }
    this.idle.push(b);
  }

  private serveWaiter(): void {
    if (this.waiters.length === 0 || this.total >= this.size || this.closed) return;
    const w = this.waiters.shift()!;
    w.served();
    this.open(w.passThrough).then(w.resolve, w.reject);
  }

  /** Closes idle connections unused for `idleMs`. */
  reap(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const b = this.idle[i]!;
      if (b.dead || b.lastUsedMs < cutoff) {
        this.idle.splice(i, 1);
        b.close();
        this.total--;
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const b of this.idle) b.close();
    this.total -= this.idle.length;
    this.idle.length = 0;
    for (const w of this.waiters.splice(0))
      w.reject(new RouterError(SQLSTATE.adminShutdown, 'the router is shutting down'));
  }
}
