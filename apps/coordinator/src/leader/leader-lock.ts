// Leader election: the active coordinator holds a session-level advisory lock on a dedicated
// catalog-database connection. If this process dies, its connection closes and Postgres releases
// the lock, so a standby polling pg_try_advisory_lock takes over. If the connection breaks or stops
// answering, the holder treats the lock as lost at once (it may already be someone else's).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@tessera/telemetry';
import pg from 'pg';
import { LEADER_LOCK } from '../store/catalog-store.js';

export interface LeaderLockOptions {
  url: string;
  /** Retry interval while standing by, and check interval while holding. */
  pollMs: number;
  log: Logger;
}

export class LeaderLock {
  private client: pg.Client | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private lostReason: Error | undefined;
  private onLost: ((reason: Error) => void) | undefined;
  private lostPromise: Promise<Error> = new Promise(() => {});
  /** Backend pid of the connection holding the lock, while held. */
  pid: number | undefined;

  constructor(private readonly opts: LeaderLockOptions) {}

  /**
   * Resolves true once the lock is held; retries every pollMs while another coordinator holds it
   * or the database is unreachable. Resolves false if `signal` aborts first.
   */
  async acquire(signal: AbortSignal, onStandby: () => void): Promise<boolean> {
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
        if (!announced) {
          announced = true;
          onStandby();
          log.info({ role: 'standby' }, 'another coordinator holds the leader lock; standing by');
        }
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

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.opts.url,
      keepAlive: true,
      keepAliveInitialDelayMillis: 1_000,
      connectionTimeoutMillis: 5_000,
      application_name: 'tessera-coordinator-leader',
    });
    // Events of a connection already replaced are ignored.
    client.on('error', (e) => {
      if (this.client === client)
        this.lose(new Error(`the leader-lock connection failed: ${e.message}`));
    });
    client.on('end', () => {
      if (this.client === client) this.lose(new Error('the leader-lock connection closed'));
    });
    this.client = client;
    try {
      await client.connect();
    } catch (e) {
      this.drop();
      throw e;
    }
    return client;
  }

  private held(client: pg.Client, pid: number): void {
    this.pid = pid;
    this.lostReason = undefined;
    this.lostPromise = new Promise((resolve) => (this.onLost = resolve));
    // A connection that silently stops answering is as good as lost: Postgres may already have
    // dropped it and handed the lock to a standby.
    const timeoutMs = Math.max(2_000, this.opts.pollMs * 4);
    let inFlight = false;
    this.checkTimer = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      const timer = setTimeout(() => {
        if (this.client === client)
          this.lose(new Error(`the leader-lock connection did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      client
        .query('select 1')
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
