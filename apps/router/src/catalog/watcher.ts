// Keeps the router's catalog current: registers with the coordinator, watches its catalog stream,
// builds and validates one snapshot per epoch, swaps it in whole (epochs.ts), and acknowledges
// epoch E once no statement admitted under an older epoch still runs (or the drain deadline
// passed). While the coordinator is away it keeps the last good catalog and reconnects with
// backoff. It also renews the router's lease (lease.ts) every third of the lease: once the lease
// lapses, statements on nodes are held until it is renewed (admit/admit.ts).
import {
  CatalogService,
  Code,
  RouterLeaseService,
  RouterService,
  RpcError,
  createClient,
  type Catalog,
} from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { Snapshot } from '@tessera/keyspace';
import { Epochs, type Epoch } from './epochs.js';
import { RouterLease } from './lease.js';
import { snapshotOf } from './routing-catalog.js';

export interface WatcherOptions {
  coordinator: string;
  routerId: string;
  /** Address clients use to reach this router (registered with the coordinator). */
  address: string;
  token?: string | undefined;
  log: Logger;
  /** Called after each swap (pool retirement, metrics). */
  onSwap?: (catalog: Snapshot) => void;
  /** How long an acknowledgement waits for statements of older epochs (default 5000). */
  drainTimeoutMs?: number;
  /** The drain deadline of `epoch` passed with `running` older statements still running. */
  onDrainDeadline?: (epoch: bigint, running: number) => void;
  /** A lease renewal was granted (true) or failed (false). */
  onRenewal?: (granted: boolean) => void;
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5000;
const HEARTBEAT_MS = 5000;
/** Renewals before the first grant (the coordinator says the lease's length). */
const FIRST_RENEW_MS = 1000;

export class CatalogWatcher {
  /** The epochs served: the current one, replaced whole, and older ones still running. */
  readonly epochs: Epochs;
  /** This router's lease; statements on nodes wait while it is lapsed. */
  readonly lease = new RouterLease();
  private readonly abort = new AbortController();
  private readonly catalogClient;
  private readonly routerClient;
  private readonly leaseClient;
  private renewTimer: NodeJS.Timeout | undefined;
  /** Whether the coordinator knows this router (RegisterRouter answered since the last NOT_FOUND). */
  private registered = false;
  private readonly firstCatalog: Promise<void>;
  private resolveFirst!: () => void;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly opts: WatcherOptions) {
    const clientOpts =
      opts.token !== undefined ? { token: opts.token, deadlineMs: 5000 } : { deadlineMs: 5000 };
    this.catalogClient = createClient(CatalogService, opts.coordinator, clientOpts);
    this.routerClient = createClient(RouterService, opts.coordinator, {
      ...clientOpts,
      channel: this.catalogClient.grpcClient,
    });
    this.leaseClient = createClient(RouterLeaseService, opts.coordinator, {
      ...clientOpts,
      channel: this.catalogClient.grpcClient,
    });
    this.firstCatalog = new Promise((resolve) => (this.resolveFirst = resolve));
    this.epochs = new Epochs({
      drainTimeoutMs: opts.drainTimeoutMs ?? 5000,
      ackable: () => void this.ack(),
      deadlinePassed: (epoch, running) => {
        opts.log.warn(
          { epoch: String(epoch), running },
          'acknowledging the epoch although statements admitted under an older one still run (drain deadline passed)',
        );
        opts.onDrainDeadline?.(epoch, running);
      },
    });
  }

  get catalog(): Snapshot | undefined {
    return this.epochs.current?.snapshot;
  }

  /** The current epoch: the snapshot statements are admitted under now. */
  get epoch(): Epoch | undefined {
    return this.epochs.current;
  }

  /** Resolves once a valid catalog is in use (or never, if none arrives). */
  ready(): Promise<void> {
    return this.firstCatalog;
  }

  start(): void {
    void this.loop();
    this.scheduleRenewal(FIRST_RENEW_MS);
    this.heartbeat = setInterval(() => void this.ack(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async loop(): Promise<void> {
    let backoff = BACKOFF_MIN_MS;
    while (!this.stopped) {
      try {
        await this.routerClient.registerRouter(
          { id: this.opts.routerId, address: this.opts.address },
          { signal: this.abort.signal },
        );
        this.registered = true;
        if (this.lease.lapsed()) void this.renew();
        const after = this.catalog?.epoch ?? 0n;
        for await (const catalog of this.catalogClient.watchCatalog(
          { afterEpoch: after },
          { signal: this.abort.signal },
        )) {
          backoff = BACKOFF_MIN_MS;
          this.swap(catalog);
        }
        if (!this.stopped)
          this.opts.log.warn('the coordinator ended the catalog stream; reconnecting');
      } catch (e) {
        if (this.stopped) return;
        this.opts.log.warn(
          { err: (e as Error).message, retryInMs: backoff },
          'catalog watch failed; serving the last catalog and retrying',
        );
      }
      await sleep(backoff, this.abort.signal);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  private swap(catalog: Catalog): void {
    const current = this.catalog;
    if (current !== undefined && catalog.epoch <= current.epoch) return;
    let next: Snapshot;
    try {
      next = snapshotOf(catalog);
    } catch (e) {
      this.opts.log.error(
        { epoch: String(catalog.epoch), err: (e as Error).message },
        'REFUSED an invalid catalog; still routing by the previous one',
      );
      return;
    }
    this.epochs.swap(next);
    this.opts.log.info(
      { epoch: String(next.epoch), nodes: next.nodes.length },
      'catalog swapped in',
    );
    this.opts.onSwap?.(next);
    this.resolveFirst();
  }

  /** Acknowledges the newest epoch that may be (also the heartbeat). */
  private async ack(): Promise<void> {
    const epoch = this.epochs.ackable;
    if (epoch === undefined || this.stopped) return;
    try {
      await this.routerClient.ackEpoch({ routerId: this.opts.routerId, epoch });
    } catch (e) {
      this.opts.log.debug({ err: (e as Error).message }, 'epoch acknowledgement failed');
    }
  }

  private scheduleRenewal(ms: number): void {
    if (this.stopped) return;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = setTimeout(() => void this.renew(), ms);
    this.renewTimer.unref();
  }

  #renewing = false;

  /** One renewal, then the next one scheduled a third of the lease later. */
  private async renew(): Promise<void> {
    if (this.stopped || this.#renewing) return;
    this.#renewing = true;
    let next = FIRST_RENEW_MS;
    try {
      if (!this.registered) {
        await this.routerClient.registerRouter(
          { id: this.opts.routerId, address: this.opts.address },
          { signal: this.abort.signal },
        );
        this.registered = true;
      }
      const sentAt = performance.now();
      const granted = await this.leaseClient.renewRouterLease(
        { routerId: this.opts.routerId, epoch: this.catalog?.epoch ?? 0n },
        { signal: this.abort.signal },
      );
      const leaseMs = Number(granted.leaseMs);
      this.lease.granted(sentAt, leaseMs);
      this.opts.onRenewal?.(true);
      next = Math.max(100, Math.floor(leaseMs / 3));
    } catch (e) {
      if (this.stopped) return;
      this.opts.onRenewal?.(false);
      const code = e instanceof RpcError ? e.code : undefined;
      // The coordinator no longer knows this router (a new catalog): register again first.
      if (code === Code.NOT_FOUND) this.registered = false;
      this.opts.log.warn(
        {
          err: (e as Error).message,
          leaseLeftMs: Math.round(this.lease.leftMs()),
          ...(code === Code.FAILED_PRECONDITION ? { catchingUp: true } : {}),
        },
        'router lease renewal failed; statements on nodes wait once the lease lapses',
      );
    } finally {
      this.#renewing = false;
      this.scheduleRenewal(next);
    }
  }

  /** Stops watching; tells the coordinator not to wait for this router (best effort, bounded). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.epochs.close();
    this.lease.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.abort.abort();
    if (this.registered)
      await this.leaseClient
        .deregisterRouter({ routerId: this.opts.routerId }, { deadlineMs: 1000 })
        .catch(() => undefined);
    this.catalogClient.close();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
