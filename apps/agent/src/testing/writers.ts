// Test helpers: write load on a failing-over node, and what became of it. Writers insert unique
// ids into table `t` on the node's primary, each following the catalog to the primary it names
// after an error, and record when each write was sent and acknowledged, and by which server;
// `missing` finds acknowledged ids absent from a server.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { PgServer } from '@tessera/testkit';
import { addr } from './ha-cluster.js';

export interface Writers {
  /** Ids whose INSERT was acknowledged. */
  acked: Set<number>;
  /** Errors seen by the writers, with when (ms since start). */
  errors: { at: number; message: string }[];
  /**
   * Each acknowledged write: when it was sent (`sent`) and acknowledged (`at`), in monotonic ms,
   * and the server (host:port) that acknowledged it.
   */
  acks: { at: number; sent: number; server: string }[];
  stop(): Promise<void>;
}

/** Ids are unique across every set of writers of a test process. */
let nextId = 1;

/** Where writers find the primary now (HaCluster is one). */
export interface PrimarySource {
  primary(): Promise<{ url(): string; host: string; port: number }>;
}

/**
 * `n` writers inserting unique ids into table `t` on d1's primary, autocommit. Each follows the
 * catalog: after an error it reconnects to whatever the catalog names as the primary now.
 */

export function startWriters(cluster: PrimarySource, n: number): Writers {
  const acked = new Set<number>();
  const errors: Writers['errors'] = [];
  const acks: Writers['acks'] = [];
  let stopped = false;
  const t0 = performance.now();
  const one = async (): Promise<void> => {
    let client: pg.Client | undefined;
    let server = '';
    while (!stopped) {
      try {
        if (!client) {
          const p = await cluster.primary();
          server = addr(p);
          client = new pg.Client({
            connectionString: p.url(),
            connectionTimeoutMillis: 2_000,
            query_timeout: 10_000,
          });
          client.on('error', () => undefined);
          await client.connect();
        }
        const id = nextId++;
        const sent = performance.now();
        await client.query('insert into t (id) values ($1)', [id]);
        acked.add(id);
        acks.push({ at: performance.now(), sent, server });
      } catch (e) {
        errors.push({
          at: performance.now() - t0,
          message: e instanceof Error ? e.message : String(e),
        });
        await client?.end().catch(() => undefined);
        client = undefined;
        await sleep(50);
      }
    }
    await client?.end().catch(() => undefined);
  };
  const running = Array.from({ length: n }, () => one());
  return {
    acked,
    errors,
    acks,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** Ids of `ids` missing from table t on `server`. */
export async function missing(
  server: Pick<PgServer, 'query'>,
  ids: Iterable<number>,
): Promise<number[]> {
  const rows = await server.query<{ id: number }>('select id from t');
  const have = new Set(rows.map((r) => r.id));
  return [...ids].filter((id) => !have.has(id));
}
