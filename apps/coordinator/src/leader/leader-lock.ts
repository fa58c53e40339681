// Leader election: the active coordinator holds a session-level advisory lock on a dedicated
// catalog-database connection, and every write of its term goes over that same connection
// (session()), one transaction at a time: when the connection dies the lock dies with it, and so
// does the deposed leader's ability to write, even if the catalog moved to another server. If this
// process dies, its connection closes and Postgres releases the lock, so a standby polling
// pg_try_advisory_lock takes over. The lock is taken on whichever candidate server is a primary
// (the highest timeline if several are), so the coordinators follow the catalog database when the
// home node fails over. A standby also reads the active coordinator's address, to name it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@tessera/telemetry';
import pg from 'pg';
import { unavailable } from '../errors.js';
import { LEADER_LOCK } from '../store/catalog-store.js';
import { candidateHosts, type CatalogTarget } from './catalog-url.js';
import { Mutex } from './mutex.js';

export interface LeaderLockOptions {
  target: CatalogTarget;
  /** Retry interval while standing by, and check interval while holding. */
  pollMs: number;
  log: Logger;
}

/** A checked-out leader session: release() gives it back (with the error that broke it, if one did). */
export interface SessionLease {
  client: pg.Client;
  release(broken?: Error): void;
}

const CONNECT_TIMEOUT_MS = 3_000;

export class LeaderLock {
  private client: pg.Client | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private lostReason: Error | undefined;
  private onLost: ((reason: Error) => void) | undefined;
  private lostPromise: Promise<Error> = new Promise(() => {});
  private readonly mutex = new Mutex();
  private preferred: string[] = [];
  /** Backend pid of the connection holding the lock, while held. */
  pid: number | undefined;
  /** host:port of the catalog server this coordinator is connected to. */
  host: string | undefined;
  /** While standing by: the active coordinator's advertised address, as the catalog records it. */
  activeAddress: string | undefined;

  constructor(private readonly opts: LeaderLockOptions) {}

  /** Catalog servers to try first (the home node's primary, then its replicas). */
  setPreferred(hosts: readonly string[]): void {
    this.preferred = [...hosts];
  }

  /** The URL of the server this coordinator is on (for the term's own reads). */
  url(): string | undefined {
    return this.host === undefined ? undefined : this.opts.target.urlFor(this.host);
  }

  /**
   * Resolves true once the lock is held; retries every pollMs while another coordinator holds it
   * or no catalog server is reachable. Resolves false if `signal` aborts first. `onHeldElsewhere`
   * runs on every poll that finds another coordinator holding the lock (with its address, as far as
   * the catalog knows it yet).
   */
  async acquire(
    signal: AbortSignal,
    onStandby: () => void,
    onHeldElsewhere?: (active: string | undefined) => void,
  ): Promise<boolean> {
    const { log, pollMs } = this.opts;
    let announced = false;
    let lastError = '';
    while (!signal.aborted) {
      try {
        const client = this.client ?? (await this.connect());
        const { rows } = await client.query<{ ok: boolean; pid: number }>(
          'select pg_try_advisory_lock($1, $2) as ok, pg_backend_pid() as pid',
          [...LEADER_LOCK],
        );
        const row = rows[0]!;
        if (row.ok) {
          this.held(client, row.pid);
          return true;
        }
        await this.readStandbyFacts(client);
        onHeldElsewhere?.(this.activeAddress);
        if (!announced) {
          announced = true;
          onStandby();
          log.info(
            { role: 'standby', active: this.activeAddress ?? null },
            'another coordinator holds the leader lock; standing by',
          );
        }
        lastError = '';
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        // Log each distinct failure once, not every poll.
        if (message !== lastError)
          log.warn({ err: message }, 'cannot reach the catalog database to take the leader lock');
        lastError = message;
        this.drop();
      }
      await sleep(pollMs, undefined, { signal }).catch(() => undefined);
    }
    return false;
  }

  /** Resolves with the reason once a held lock is lost. */
  lost(): Promise<Error> {
    return this.lostPromise;
  }

  /** Whether the lock is held now. */
  get holding(): boolean {
    return this.pid !== undefined;
  }

  /**
   * The leader session for one transaction or statement, exclusively. Rejects UNAVAILABLE when
   * the lock is not held (a deposed leader cannot write).
   */
  async checkout(): Promise<SessionLease> {
    const release = await this.mutex.lock();
    const client = this.client;
    if (!client || this.pid === undefined) {
      release();
      throw unavailable('this coordinator no longer holds the leader lock; it is stepping down');
    }
    return {
      client,
      release: (broken) => {
        release();
        if (broken && this.client === client)
          this.lose(new Error(`the leader session broke: ${broken.message}`));
      },
    };
  }

  /** Runs `fn` on the leader session (see checkout). */
  async session<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const lease = await this.checkout();
    let broken: Error | undefined;
    try {
      return await fn(lease.client);
    } catch (e) {
      if (isBroken(e)) broken = e as Error;
      throw e;
    } finally {
      lease.release(broken);
    }
  }

  /** Gives the lock up (closing the connection releases it). */
  async release(): Promise<void> {
    this.stopChecks();
    this.pid = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }

  /** The candidate that is a primary, preferring the highest timeline; throws when none is. */
  private async choose(): Promise<{ host: string; client: pg.Client }> {
    const errors: string[] = [];
    let best: { host: string; client: pg.Client; timeline: number } | undefined;
    for (const host of candidateHosts(this.opts.target, this.preferred)) {
      const client = this.newClient(host);
      try {
        await client.connect();
        const { rows } = await client.query<{ standby: boolean; timeline: number }>(
          `select pg_is_in_recovery() as standby,
                  case when pg_is_in_recovery() then 0
                       else ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int
                  end as timeline`,
        );
        const r = rows[0]!;
        if (r.standby) {
          errors.push(`${host} is a standby`);
          await client.end().catch(() => undefined);
          continue;
        }
        if (!best || r.timeline > best.timeline) {
          if (best) await best.client.end().catch(() => undefined);
          best = { host, client, timeline: r.timeline };
        } else await client.end().catch(() => undefined);
      } catch (e) {
        errors.push(`${host}: ${e instanceof Error ? e.message : String(e)}`);
        await client.end().catch(() => undefined);
      }
    }
    if (!best) throw new Error(`no catalog server is a reachable primary (${errors.join('; ')})`);
    return best;
  }

  private newClient(host: string): pg.Client {
    const client = new pg.Client({
      connectionString: this.opts.target.urlFor(host),
      keepAlive: true,
      keepAliveInitialDelayMillis: 1_000,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: 'tessera-coordinator-leader',
    });
    client.on('error', () => undefined); // replaced below once this client is kept
    return client;
  }

  private async connect(): Promise<pg.Client> {
    const { host, client } = await this.choose();
    client.removeAllListeners('error');
    // Events of a connection already replaced are ignored.
    client.on('error', (e) => {
      if (this.client === client)
        this.lose(new Error(`the leader-lock connection failed: ${e.message}`));
    });
    client.on('end', () => {
      if (this.client === client) this.lose(new Error('the leader-lock connection closed'));
    });
    this.client = client;
    this.host = host;
    return client;
  }

  /** As a standby: who is active, and where the home node's servers are now. */
  private async readStandbyFacts(client: pg.Client): Promise<void> {
    try {
      const active = await client.query<{ address: string }>(
        'select address from tessera.active_coordinator',
      );
      this.activeAddress = active.rows[0]?.address;
      const home = await client.query<{ addr: string; primary: boolean }>(
        `select host || ':' || port as addr, true as primary from tessera.node where role = 'home'
         union all
         select r.host || ':' || r.port, false from tessera.replica r
           join tessera.node n on n.name = r.node
          where n.role = 'home' and r.state <> 'fenced'`,
      );
      this.preferred = home.rows
        .sort((a, b) => Number(b.primary) - Number(a.primary))
        .map((r) => r.addr);
    } catch (e) {
      // 42P01/42703: a catalog not migrated yet (no coordinator was ever active on it).
      const code = (e as { code?: unknown }).code;
      if (code !== '42P01' && code !== '42703') throw e;
    }
  }

  private held(client: pg.Client, pid: number): void {
    this.pid = pid;
    this.activeAddress = undefined;
    this.lostReason = undefined;
    this.lostPromise = new Promise((resolve) => (this.onLost = resolve));
    // A connection that silently stops answering is as good as lost: Postgres may already have
    // dropped it and handed the lock to a standby. The check queues behind the session's
    // transactions, so one that takes longer than this also counts (the catalog is not usable).
    const timeoutMs = Math.max(5_000, this.opts.pollMs * 10);
    let inFlight = false;
    this.checkTimer = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      const timer = setTimeout(() => {
        if (this.client === client)
          this.lose(new Error(`the leader session did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.session((c) => c.query('select 1'))
        .catch((e: unknown) => {
          if (this.client === client) {
            this.lose(
              new Error(
                `the leader-lock check failed: ${e instanceof Error ? e.message : String(e)}`,
              ),
            );
          }
        })
        .finally(() => {
          clearTimeout(timer);
          inFlight = false;
        });
    }, this.opts.pollMs);
    this.checkTimer.unref();
  }

  private lose(reason: Error): void {
    if (this.pid === undefined) {
      // Not holding: just forget the broken connection; acquire() reconnects.
      this.drop();
      return;
    }
    if (this.lostReason) return;
    this.lostReason = reason;
    this.pid = undefined;
    this.drop();
    this.onLost?.(reason);
  }

  private drop(): void {
    this.stopChecks();
    const client = this.client;
    this.client = undefined;
    this.host = undefined;
    if (client) {
      client.removeAllListeners('end');
      client.end().catch(() => undefined);
    }
  }

  private stopChecks(): void {
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.checkTimer = undefined;
  }
}

function isBroken(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P'))) return true;
  return /Connection terminated|ECONNRESET|EPIPE|Client has encountered a connection error/i.test(
    e.message,
  );
}
