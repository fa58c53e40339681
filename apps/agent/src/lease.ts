// The primary's lease as the agent counts it, on the monotonic clock only. A lease granted in
// answer to report N runs from the moment report N was *sent*: never later than the coordinator's
// own count (which starts when it granted), so the agent's lease always ends first.

/** How many sent reports are remembered for matching grants (a grant for an older one is dropped). */
const REMEMBERED = 64;

export class Lease {
  private readonly sentAt = new Map<bigint, number>();
  private expiresAt: number | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Records that report `seq` leaves now. */
  sent(seq: bigint): void {
    this.sentAt.set(seq, this.now());
    if (this.sentAt.size > REMEMBERED) {
      const oldest = this.sentAt.keys().next().value;
      if (oldest !== undefined) this.sentAt.delete(oldest);
    }
  }

  /** A grant of `ms` counted from report `seq`; returns false when `seq` is unknown. */
  granted(seq: bigint, ms: number): boolean {
    const at = this.sentAt.get(seq);
    if (at === undefined) return false;
    const until = at + ms;
    if (this.expiresAt === undefined || until > this.expiresAt) this.expiresAt = until;
    return true;
  }

  /** Once granted at least once, the agent enforces it. */
  get armed(): boolean {
    return this.expiresAt !== undefined;
  }

  /** Milliseconds left (negative once lapsed); undefined when never granted. */
  remainingMs(): number | undefined {
    return this.expiresAt === undefined ? undefined : this.expiresAt - this.now();
  }

  /** Forgets the lease (the instance is no longer a primary holding one). */
  clear(): void {
    this.expiresAt = undefined;
  }
}
