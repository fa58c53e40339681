// Which router a workload client talks through, as behind a load balancer with health checks:
// its own router first; the next one while its own refuses; and back to its own once that
// answers again (tried in the background between operations), so a restarted router gets its
// clients back at once instead of only when their connection to another router breaks.

/** What the link needs of a connection. */
export interface Closable {
  end(): Promise<void>;
}

/** A connection attempt to router `at` (an index into the run's routers). */
export type Connect<C> = (at: number, timeoutMs: number) => Promise<C>;

export const CONNECT_TIMEOUT_MS = 5_000;
/** How often a client on another router tries its own again. */
export const RETURN_EVERY_MS = 1_000;
/** A returning attempt gives up sooner: it only asks whether the router is back. */
export const RETURN_TIMEOUT_MS = 1_000;

export class RouterLink<C extends Closable> {
  #at: number;
  #conn: C | undefined;
  /** A connection to the own router made in the background, not yet taken into use. */
  #back: C | undefined;
  #trying: Promise<void> | undefined;
  #nextTryMs = 0;
  #closed = false;

  constructor(
    readonly own: number,
    readonly routers: number,
    readonly connect: Connect<C>,
    readonly now: () => number = () => performance.now(),
  ) {
    this.#at = own;
  }

  /** The router the current (or next) connection goes to. */
  get at(): number {
    return this.#at;
  }

  /**
   * The connection for the next operation: the own router's once it answered a returning
   * attempt; undefined when the router tried refused (the next one is tried on the next call).
   */
  async connection(): Promise<C | undefined> {
    this.#takeBack();
    if (this.#conn !== undefined) {
      this.#tryOwn();
      return this.#conn;
    }
    try {
      this.#conn = await this.connect(this.#at, CONNECT_TIMEOUT_MS);
      this.#nextTryMs = this.now() + RETURN_EVERY_MS;
      return this.#conn;
    } catch {
      this.#at = (this.#at + 1) % this.routers;
      return undefined;
    }
  }

  /** The connection is not to be used again (an unknown outcome or a broken one). */
  drop(): void {
    const c = this.#conn;
    this.#conn = undefined;
    this.#at = this.own;
    c?.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.drop();
    await this.#trying;
    this.#back?.end().catch(() => undefined);
    this.#back = undefined;
  }

  #takeBack(): void {
    const back = this.#back;
    if (back === undefined) return;
    this.#back = undefined;
    if (this.#conn !== undefined && this.#at === this.own) {
      back.end().catch(() => undefined); // back on the own router meanwhile (after a drop)
      return;
    }
    this.#conn?.end().catch(() => undefined); // between operations: nothing is outstanding
    this.#conn = back;
    this.#at = this.own;
  }

  #tryOwn(): void {
    if (this.#at === this.own || this.#trying !== undefined || this.now() < this.#nextTryMs) return;
    this.#nextTryMs = this.now() + RETURN_EVERY_MS;
    this.#trying = this.connect(this.own, RETURN_TIMEOUT_MS)
      .then(
        (c) => {
          if (this.#closed) c.end().catch(() => undefined);
          else this.#back = c;
        },
        () => undefined,
      )
      .finally(() => {
        this.#trying = undefined;
      });
  }
}
