// Router leases and waiting for epoch acknowledgements (docs/operations.md, "Router leases").
// A router renews a lease of `leaseMs`; it counts the lease from when it SENT the renewal, on its
// own monotonic clock, and stops serving sharded statements once it lapses. The coordinator
// counts it from when it received the renewal (later) plus a margin for clock rate, so when the
// coordinator sees a lease lapsed, the router's own copy lapsed before. Waiting for an epoch then
// leaves such a router out ("gone") instead of stalling a cutover on it, and records that it was
// left out, so it cannot renew again until it routes by that epoch or a newer one.
import type { AwaitEpochResponse } from '@tessera/proto';
import { create, AwaitEpochResponseSchema } from '@tessera/proto';
import type pg from 'pg';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import { withClient } from './db.js';
import { readMeta } from './snapshot.js';

export const DEFAULT_ROUTER_LEASE_MS = 10_000;
/** A router that never took a lease (today's routers) counts as gone once its heartbeat is this old. */
export const DEFAULT_ROUTER_STALE_MS = 15_000;

export interface RouterLeaseOptions {
  leaseMs?: number | undefined;
  staleMs?: number | undefined;
}

interface AckRow {
  id: string;
  acked: string;
  lapsed: boolean;
  stale: boolean;
}

/**
 * How long awaitEpoch waits between looks when no acknowledgement arrives through this process
 * (one sent to another coordinator, a lease lapsing): acks this process receives wake it at once.
 */
const LOOK_EVERY_MS = 20;

export class RouterLeases {
  readonly leaseMs: number;
  readonly staleMs: number;
  /** Acknowledgements received by this process, and the waits they end. */
  private acks = 0;
  private readonly wakers = new Set<() => void>();

  constructor(
    private readonly pool: pg.Pool,
    opts: RouterLeaseOptions = {},
  ) {
    this.leaseMs = opts.leaseMs ?? DEFAULT_ROUTER_LEASE_MS;
    this.staleMs = opts.staleMs ?? DEFAULT_ROUTER_STALE_MS;
  }

  /** How far past its lease the coordinator waits before calling a router gone (clock rate). */
  get marginMs(): number {
    return Math.ceil(this.leaseMs / 20) + 100;
  }

  async renew(routerId: string, epoch: bigint): Promise<{ leaseMs: number; epoch: bigint }> {
    if (routerId === '') throw invalidArgument('a router lease needs the router id');
    return withClient(this.pool, async (c) => {
      const { rows } = await c.query<{ gone_below: string }>(
        'select gone_below_epoch::text as gone_below from tessera.router where id = $1 and not deregistered',
        [routerId],
      );
      const row = rows[0];
      if (!row) throw notFound(`router ${routerId} is not registered; call RegisterRouter first`);
      if (epoch < BigInt(row.gone_below)) {
        throw failedPrecondition(
          `router ${routerId} was left out of epoch ${row.gone_below} when its lease lapsed; route by epoch ${row.gone_below} or newer before renewing`,
        );
      }
      await c.query(
        `update tessera.router set lease_until = clock_timestamp() + $2 * interval '1 millisecond',
            last_heartbeat = clock_timestamp() where id = $1`,
        [routerId, this.leaseMs],
      );
      return { leaseMs: this.leaseMs, epoch: (await readMeta(c)).epoch };
    });
  }

  async deregister(routerId: string): Promise<void> {
    await withClient(this.pool, (c) =>
      c.query('update tessera.router set deregistered = true where id = $1', [routerId]),
    );
  }

  /** One look: who acked `epoch`, who is still awaited, who is gone. */
  private async look(epoch: bigint): Promise<{ waiting: string[]; gone: string[] }> {
    const { rows } = await withClient(this.pool, (c) =>
      c.query<AckRow>(
        `select id, acked_epoch::text as acked,
                (lease_until is not null
                 and lease_until + $1 * interval '1 millisecond' < clock_timestamp()) as lapsed,
                (lease_until is null
                 and last_heartbeat + $2 * interval '1 millisecond' < clock_timestamp()) as stale
           from tessera.router where not deregistered order by id collate "C"`,
        [this.marginMs, this.staleMs],
      ),
    );
    const waiting: string[] = [];
    const gone: string[] = [];
    for (const r of rows) {
      if (BigInt(r.acked) >= epoch) continue;
      if (r.lapsed || r.stale) gone.push(r.id);
      else waiting.push(r.id);
    }
    return { waiting, gone };
  }

  /** AckEpoch wrote a router's acknowledgement: waits in awaitEpoch look again now. */
  acked(): void {
    this.acks++;
    for (const wake of this.wakers) wake();
    this.wakers.clear();
  }

  /**
   * Resolves once every router that is not gone acknowledged `epoch` (or a newer one), or when
   * `timeoutMs` passed. Looks at the router table (AckEpoch writes acks there) again as soon as
   * this process receives an ack, else every LOOK_EVERY_MS. Not a tight poll: a cutover waits
   * here while its range is frozen, on machines the cluster's clients keep busy.
   */
  async awaitEpoch(epoch: bigint, timeoutMs: number): Promise<AwaitEpochResponse> {
    const start = Date.now();
    let seen = this.acks;
    let look = await this.look(epoch);
    while (look.waiting.length > 0 && Date.now() - start < timeoutMs) {
      const left = timeoutMs - (Date.now() - start);
      // An ack that came in during the look is not waited for again.
      if (this.acks === seen) await this.nextAck(Math.min(LOOK_EVERY_MS, left));
      seen = this.acks;
      look = await this.look(epoch);
    }
    if (look.gone.length > 0) {
      await withClient(this.pool, (c) =>
        c.query(
          `update tessera.router set gone_below_epoch = greatest(gone_below_epoch, $2)
            where id = any($1::text[])`,
          [look.gone, epoch.toString()],
        ),
      );
    }
    return create(AwaitEpochResponseSchema, {
      reached: look.waiting.length === 0,
      waitingFor: look.waiting,
      gone: look.gone,
      waitedMs: BigInt(Date.now() - start),
    });
  }

  private nextAck(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }
}
