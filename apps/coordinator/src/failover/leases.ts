// The primaries' leases as the coordinator counts them, on the monotonic clock. A lease counts
// from when it was granted (the agent counts from when it sent the report answered, which is
// earlier, so the agent's lease always ends first). A coordinator that has just become active
// treats every lease as granted at that moment: its predecessor may have granted one just before
// it died.
export class Leases {
  private readonly grantedAt = new Map<string, number>();
  private activeSince = 0;

  constructor(
    readonly leaseMs: number,
    readonly marginMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  activated(): void {
    this.activeSince = this.now();
    this.grantedAt.clear();
  }

  granted(node: string): void {
    this.grantedAt.set(node, this.now());
  }

  /** Milliseconds left on the node's primary's lease as granted (negative: lapsed). */
  remainingMs(node: string): number {
    const from = Math.max(this.grantedAt.get(node) ?? 0, this.activeSince);
    return from + this.leaseMs - this.now();
  }

  /** Lease plus margin have passed: the primary's agent has stopped it, if it is alive. */
  expired(node: string): boolean {
    return this.remainingMs(node) + this.marginMs < 0;
  }
}
