// Every pool of the router, keyed by (node, address, database, user), created on first use. A
// node whose address changes in the catalog gets fresh pools; the old ones drain and close.
import type { Snapshot } from '@tessera/keyspace';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Backend } from './backend.js';
import { Pool, type AcquireStats } from './pool.js';
import type { ScramPassThrough } from './scram-pass-through.js';

export interface PoolSettings {
  size: number;
  acquireTimeoutMs: number;
  connectTimeoutMs: number;
  nodePassword?: string | undefined;
}

export class Pools {
  private readonly pools = new Map<string, Pool>();
  /** Per node, over every pool it had (pools of a moved node are replaced; counts go on). */
  private readonly stats = new Map<string, AcquireStats>();
  private readonly reaper: NodeJS.Timeout;

  constructor(private readonly settings: PoolSettings) {
    this.reaper = setInterval(() => {
      for (const p of this.pools.values()) p.reap(60_000);
    }, 10_000);
    this.reaper.unref();
  }

  pool(catalog: Snapshot, node: string, database: string, user: string): Pool {
    const addr = catalog.address(node);
    if (!addr)
      throw new RouterError(SQLSTATE.connectionFailure, `node "${node}" is not in the catalog`);
    const key = `${node}\0${addr.host}:${addr.port}\0${database}\0${user}`;
    let p = this.pools.get(key);
    if (!p) {
      p = new Pool(
        {
          node,
          host: addr.host,
          port: addr.port,
          database,
          user,
          password: this.settings.nodePassword,
        },
        this.settings.size,
        this.settings.connectTimeoutMs,
        this.statsOf(node),
      );
      this.pools.set(key, p);
    }
    return p;
  }

  acquire(
    catalog: Snapshot,
    node: string,
    database: string,
    user: string,
    passThrough?: ScramPassThrough,
  ): Promise<Backend> {
    return this.pool(catalog, node, database, user).acquire(
      this.settings.acquireTimeoutMs,
      passThrough,
    );
  }

  /** Closes pools whose node is gone from the catalog or moved to another address. */
  retire(catalog: Snapshot): void {
    for (const [key, p] of this.pools) {
      const addr = catalog.address(p.target.node);
      if (!addr || addr.host !== p.target.host || addr.port !== p.target.port) {
        p.close();
        this.pools.delete(key);
      }
    }
  }

  private statsOf(node: string): AcquireStats {
    let st = this.stats.get(node);
    if (st === undefined) this.stats.set(node, (st = { waits: 0, timeouts: 0, abandoned: 0 }));
    return st;
  }

  /** Per node: waits for a busy pool, and how many timed out or were abandoned (metrics). */
  acquireStats(): ReadonlyMap<string, Readonly<AcquireStats>> {
    return this.stats;
  }

  /** Per node: backends idle and busy (for the pool gauge). */
  usage(): Map<string, { idle: number; busy: number }> {
    const out = new Map<string, { idle: number; busy: number }>();
    for (const p of this.pools.values()) {
      const u = out.get(p.target.node) ?? { idle: 0, busy: 0 };
      u.idle += p.idleCount;
      u.busy += p.busy;
      out.set(p.target.node, u);
    }
    return out;
  }

  close(): void {
    clearInterval(this.reaper);
    for (const p of this.pools.values()) p.close();
    this.pools.clear();
  }
}
