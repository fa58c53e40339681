// Fans catalog snapshots out to WatchCatalog streams: every epoch exactly once, in order. Changes
// commit one behind another (the meta row lock), but their callbacks may come back out of order,
// so publish() holds an early snapshot until the ones before it arrive. Each watcher has a bounded
// queue; one that falls too far behind is cut off with RESOURCE_EXHAUSTED so memory stays bounded.
import type { Catalog } from '@tessera/proto';
import { CatalogError, unavailable } from './errors.js';

export interface WatchHubOptions {
  /** Snapshots a watcher may have queued before it is disconnected. */
  maxQueue?: number;
  /**
   * How long a missing epoch is waited for before `resync` is asked for the current catalog. A
   * gap only happens when a commit's outcome was lost with its connection.
   */
  gapTimeoutMs?: number;
  resync?: () => Promise<Catalog>;
}

interface Watcher {
  queue: Catalog[];
  failure: Error | undefined;
  wake: (() => void) | undefined;
}

export class WatchHub {
  private latest: Catalog | undefined;
  private readonly early = new Map<bigint, Catalog>();
  private readonly watchers = new Set<Watcher>();
  private readonly waiters: { epoch: bigint; resolve: () => void }[] = [];
  private gapTimer: NodeJS.Timeout | undefined;
  private readonly maxQueue: number;
  private readonly gapTimeoutMs: number;

  constructor(private readonly opts: WatchHubOptions = {}) {
    this.maxQueue = opts.maxQueue ?? 1024;
    this.gapTimeoutMs = opts.gapTimeoutMs ?? 2_000;
  }

  /** The newest published snapshot (undefined until the coordinator is active). */
  get current(): Catalog | undefined {
    return this.latest;
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Starts over from a snapshot loaded at activation. */
  reset(catalog: Catalog): void {
    this.early.clear();
    this.latest = undefined;
    this.deliver(catalog);
  }

  /** Publishes the snapshot of a committed change; out-of-order ones wait for their turn. */
  publish(catalog: Catalog): void {
    const latest = this.latest;
    if (latest === undefined || catalog.epoch <= latest.epoch) return;
    if (catalog.epoch !== latest.epoch + 1n) {
      this.early.set(catalog.epoch, catalog);
      this.armGapTimer();
      return;
    }
    this.deliver(catalog);
    for (
      let next = this.early.get(catalog.epoch + 1n);
      next;
      next = this.early.get(next.epoch + 1n)
    ) {
      this.early.delete(next.epoch);
      this.deliver(next);
    }
    if (this.early.size === 0) this.clearGapTimer();
  }

  /** Resolves once the snapshot of `epoch` (or a later one) has been published. */
  published(epoch: bigint): Promise<void> {
    if (this.latest && this.latest.epoch >= epoch) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ epoch, resolve }));
  }

  /**
   * Snapshots with an epoch above `afterEpoch`: the current one at once if newer, then each new
   * one. The watcher is registered now, not at the first next(); iterate it to the end or
   * return() it (an aborted `signal` ends it too).
   */
  watch(afterEpoch: bigint, signal?: AbortSignal): AsyncGenerator<Catalog, void, undefined> {
    const w: Watcher = { queue: [], failure: undefined, wake: undefined };
    if (this.latest && this.latest.epoch > afterEpoch) w.queue.push(this.latest);
    this.watchers.add(w);
    // A cancelled call must leave the set now, not at the next epoch.
    const onAbort = (): void => w.wake?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    const watchers = this.watchers;
    return (async function* () {
      try {
        for (;;) {
          const next = w.queue.shift();
          if (next) {
            if (next.epoch > afterEpoch) yield next;
            continue;
          }
          if (w.failure) throw w.failure;
          if (signal?.aborted) return;
          await new Promise<void>((resolve) => (w.wake = resolve));
          w.wake = undefined;
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
        watchers.delete(w);
      }
    })();
  }

  /** Ends every watch with `error` (the coordinator stepped down or is stopping). */
  close(
    error: Error = unavailable('the coordinator is no longer active; reconnect to the active one'),
  ): void {
    this.clearGapTimer();
    this.latest = undefined;
    this.early.clear();
    for (const w of this.watchers) this.fail(w, error);
    // Pending change calls were already answered by their own transactions; release their waits.
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  private deliver(catalog: Catalog): void {
    this.latest = catalog;
    for (const w of this.watchers) {
      if (w.failure) continue;
      if (w.queue.length >= this.maxQueue) {
        this.fail(
          w,
          new CatalogError(
            'RESOURCE_EXHAUSTED',
            `this watcher fell more than ${this.maxQueue} epochs behind; reconnect`,
          ),
        );
        continue;
      }
      w.queue.push(catalog);
      w.wake?.();
    }
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.epoch <= catalog.epoch) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  private fail(w: Watcher, error: Error): void {
    w.failure = error;
    w.queue.length = 0;
    w.wake?.();
  }

  private armGapTimer(): void {
    if (this.gapTimer || !this.opts.resync) return;
    const resync = this.opts.resync;
    this.gapTimer = setTimeout(() => {
      this.gapTimer = undefined;
      if (this.early.size === 0) return;
      resync().then(
        (catalog) => this.skipTo(catalog),
        () => this.armGapTimer(),
      );
    }, this.gapTimeoutMs);
  }

  /** Gives up on a missing epoch: publishes what the database holds now, then what follows it. */
  private skipTo(catalog: Catalog): void {
    if (!this.latest) return;
    if (catalog.epoch > this.latest.epoch) this.deliver(catalog);
    for (const epoch of [...this.early.keys()].sort((a, b) => (a < b ? -1 : 1))) {
      const snap = this.early.get(epoch)!;
      if (snap.epoch > this.latest.epoch + 1n) break;
      this.early.delete(epoch);
      if (snap.epoch === this.latest.epoch + 1n) this.deliver(snap);
    }
    if (this.early.size > 0) this.armGapTimer();
  }

  private clearGapTimer(): void {
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.gapTimer = undefined;
  }
}
