// The catalog epochs a router serves by, each with the number of statements admitted under it
// that still run. A new snapshot becomes current at once; epoch E may be acknowledged to the
// coordinator only when no statement admitted under an older epoch is still running (or the
// drain deadline passed), so "every router acked E" means "nothing routed by an older catalog
// still runs". Statements held for a later epoch wait here (next()).
import type { Snapshot } from '@tessera/keyspace';
import type { Admission } from '../admit/decision.js';

/** One epoch as the statement path sees it: its snapshot, and its statements still running. */
export class Epoch implements Admission {
  running = 0;

  constructor(
    readonly snapshot: Snapshot,
    private readonly onDrained: (e: Epoch) => void,
  ) {}

  /** A statement admitted under this epoch starts running. */
  enter(): void {
    this.running++;
  }

  /** That statement is over. */
  leave(): void {
    if (--this.running === 0) this.onDrained(this);
  }
}

export interface EpochsOptions {
  /** How long an epoch's acknowledgement waits for older statements before it goes anyway. */
  drainTimeoutMs: number;
  /** Epoch `epoch` may be acknowledged now. */
  ackable(epoch: bigint): void;
  /** The drain deadline passed with `running` statements of older epochs still running. */
  deadlinePassed(epoch: bigint, running: number): void;
}

interface Waiter {
  readonly after: bigint;
  resolve(e: Epoch | undefined): void;
}

export class Epochs {
  #current: Epoch | undefined;
  /** Replaced epochs whose statements still run. */
  readonly #older = new Set<Epoch>();
  #waiters: Waiter[] = [];
  /** The epoch waiting for older statements to finish, and its deadline. */
  #pending: { epoch: bigint; timer: NodeJS.Timeout } | undefined;
  #acked: bigint | undefined;

  constructor(private readonly opts: EpochsOptions) {}

  get current(): Epoch | undefined {
    return this.#current;
  }

  /** The newest epoch that may be acknowledged (re-sent as the heartbeat). */
  get ackable(): bigint | undefined {
    return this.#acked;
  }

  /** Statements of epochs older than the current one still running. */
  get olderRunning(): number {
    let n = 0;
    for (const e of this.#older) n += e.running;
    return n;
  }

  /** `snapshot` is the catalog from now on. */
  swap(snapshot: Snapshot): Epoch {
    const previous = this.#current;
    const next = new Epoch(snapshot, this.#drained);
    this.#current = next;
    if (previous !== undefined && previous.running > 0) this.#older.add(previous);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) {
      if (snapshot.epoch > w.after) w.resolve(next);
      else this.#waiters.push(w);
    }
    this.#check();
    return next;
  }

  /**
   * The first epoch after `after` (the current one if it is newer already); undefined when
   * `timeoutMs` passes first or `cancel` is called.
   */
  next(after: bigint, timeoutMs: number): { epoch: Promise<Epoch | undefined>; cancel(): void } {
    const current = this.#current;
    if (current !== undefined && current.snapshot.epoch > after)
      return { epoch: Promise.resolve(current), cancel: () => undefined };
    let waiter!: Waiter;
    const epoch = new Promise<Epoch | undefined>((resolve) => {
      waiter = {
        after,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
    });
    const cancel = (): void => {
      const i = this.#waiters.indexOf(waiter);
      if (i >= 0) this.#waiters.splice(i, 1);
      waiter.resolve(undefined);
    };
    this.#waiters.push(waiter);
    const timer = setTimeout(cancel, timeoutMs);
    return { epoch, cancel };
  }

  readonly #drained = (e: Epoch): void => {
    if (e === this.#current) return;
    this.#older.delete(e);
    this.#check();
  };

  /** Acknowledges the current epoch once nothing older runs; else waits, up to the deadline. */
  #check(): void {
    const current = this.#current;
    if (current === undefined) return;
    const epoch = current.snapshot.epoch;
    if (this.olderRunning === 0) {
      if (this.#pending !== undefined) clearTimeout(this.#pending.timer);
      this.#pending = undefined;
      this.#ack(epoch);
      return;
    }
    if (this.#pending?.epoch === epoch) return;
    if (this.#pending !== undefined) clearTimeout(this.#pending.timer);
    const timer = setTimeout(() => {
      this.#pending = undefined;
      this.opts.deadlinePassed(epoch, this.olderRunning);
      // The stragglers keep running; they no longer hold the epoch back.
      this.#older.clear();
      this.#ack(epoch);
    }, this.opts.drainTimeoutMs);
    timer.unref();
    this.#pending = { epoch, timer };
  }

  #ack(epoch: bigint): void {
    if (this.#acked !== undefined && this.#acked >= epoch) return;
    this.#acked = epoch;
    this.opts.ackable(epoch);
  }

  /** Stops the deadline timer and lets every waiting statement go (the router is stopping). */
  close(): void {
    if (this.#pending !== undefined) clearTimeout(this.#pending.timer);
    this.#pending = undefined;
    for (const w of this.#waiters.splice(0)) w.resolve(undefined);
  }
}
