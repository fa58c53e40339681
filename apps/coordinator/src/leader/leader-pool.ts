// The term's stores talk to the catalog through this: the pg.Pool surface they use (connect,
// release, query, end), every call served by the leader session one at a time. So every write of
// the active coordinator goes over the connection that holds the leader lock, and none can
// commit once that connection (and with it the lock) is gone.
import type pg from 'pg';
import type { LeaderLock } from './leader-lock.js';

export function leaderPool(lock: LeaderLock): pg.Pool {
  const pool = {
    async connect(): Promise<pg.PoolClient> {
      const lease = await lock.checkout();
      const client = lease.client as unknown as pg.PoolClient;
      return new Proxy(client, {
        get(target, prop, receiver) {
          if (prop === 'release')
            return (err?: Error | boolean) => lease.release(err instanceof Error ? err : undefined);
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    },
    query(text: string, params?: unknown[]) {
      return lock.session((c) => c.query(text, params));
    },
    on() {
      return pool;
    },
    async end(): Promise<void> {
      // The session belongs to the leader lock, which closes it.
    },
  };
  return pool as unknown as pg.Pool;
}
