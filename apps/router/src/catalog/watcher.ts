// Keeps the router's catalog current: registers with the coordinator, watches its catalog stream,
// builds and validates one snapshot per epoch, swaps it in whole (epochs.ts), and acknowledges
// epoch E once no statement admitted under an older epoch still runs (or the drain deadline
// passed). While the coordinator is away it keeps the last good catalog and reconnects with
// backoff.
import { CatalogService, RouterService, createClient, type Catalog } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { Snapshot } from '@tessera/keyspace';
import { Epochs, type Epoch } from './epochs.js';
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
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5000;
const HEARTBEAT_MS = 5000;

export class CatalogWatcher {
  /** The epochs served: the current one, replaced whole, and older ones still running. */
  readonly epochs: Epochs;
  private readonly abort = new AbortController();
  private readonly catalogClient;
  private readonly routerClient;
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

  stop(): void {
    this.stopped = true;
    this.epochs.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.abort.abort();
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
