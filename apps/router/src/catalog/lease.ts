// This router's lease with the coordinator (docs/operations.md, "Router leases"). The router
// counts a lease from the moment it SENT the renewal, on its own monotonic clock; the coordinator
// counts it from when it received it, plus a margin, so when the coordinator sees the lease
// lapsed (and stops waiting for this router's acknowledgements), this router already stopped
// serving statements on nodes: it may be routing by a catalog a cutover has made wrong. Until the
// first grant the lease counts as lapsed. Bookkeeping only: catalog/watcher.ts sends renewals.

export class RouterLease {
  /** performance.now() until which the lease holds; undefined before the first grant. */
  #validUntil: number | undefined;
  #waiters = new Set<(ok: boolean) => void>();

  /** Whether this router must not serve statements on nodes now. */
  lapsed(now = performance.now()): boolean {
    return this.#validUntil === undefined || now >= this.#validUntil;
  }

  /** Milliseconds of lease left (0 when lapsed). */
  leftMs(now = performance.now()): number {
    return this.#validUntil === undefined ? 0 : Math.max(0, this.#validUntil - now);
  }

  /** A renewal sent at `sentAt` (performance.now()) was granted for `leaseMs`. */
  granted(sentAt: number, leaseMs: number): void {
    const until = sentAt + leaseMs;
    if (this.#validUntil === undefined || until > this.#validUntil) this.#validUntil = until;
    if (this.lapsed()) return;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake(true);
  }

  /**
   * Resolves true once the lease holds again (at once if it holds), false after `timeoutMs` or
   * when cancelled.
   */
  whenValid(timeoutMs: number): { readonly valid: Promise<boolean>; cancel(): void } {
    if (!this.lapsed()) return { valid: Promise.resolve(true), cancel: () => undefined };
    let settle!: (ok: boolean) => void;
    const valid = new Promise<boolean>((resolve) => (settle = resolve));
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      this.#waiters.delete(done);
      settle(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    this.#waiters.add(done);
    return { valid, cancel: () => done(false) };
  }

  /** The router is stopping: every waiter is let go (false). */
  close(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    this.#validUntil = undefined;
    for (const wake of waiters) wake(false);
  }
}
