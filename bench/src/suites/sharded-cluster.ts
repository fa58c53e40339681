// The cluster the multi-node suites (scatter, 2pc) share: a catalog server that owns no data,
// three data nodes, the router in front of them, and one plain Postgres (`single`) that holds all
// the rows: the nearest plain-Postgres equivalent. A router or coordinator that cannot start is a
// skip with its reason; the plain Postgres side still runs.
import pg from 'pg';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import type { BenchOptions } from '../options.js';
import type { TargetInfo } from '../report/model.js';
import {
  ownerOf,
  startBenchCatalog,
  type BenchCatalog,
  type BenchKeyspace,
} from '../targets/catalog.js';
import { startRouter } from '../targets/router.js';
import type { Target } from '../targets/target.js';

export const DATA_NODES = 3;

export interface ShardedCluster {
  /** Holds the catalog database and tables the catalog does not declare (global tables). */
  readonly home: PgServer;
  readonly data: readonly PgServer[];
  /** One plain Postgres holding every row. */
  readonly single: PgServer;
  readonly catalog: BenchCatalog | undefined;
  /** Running, or undefined with the reason in `infos`. */
  readonly router: Target | undefined;
  readonly infos: TargetInfo[];
  /**
   * For each key, the index in `data` of the node that owns it, by the catalog's ranges and
   * Postgres's own hash of the key (computed on the home server); round-robin when there is no
   * catalog, which serves the plain-Postgres side alike.
   */
  ownersOf(keys: readonly bigint[]): Promise<number[]>;
  stop(): Promise<void>;
}

export interface ShardedClusterOptions {
  name: string;
  opts: BenchOptions;
  keyspace: BenchKeyspace;
  /** Statements creating the distributed tables, run on every data node and on `single`. */
  tableDdl: readonly string[];
  /** Clients that may be connected at once. */
  maxClients: number;
  /** Whether any of the suite's targets goes through the router (else it is not started). */
  withRouter: boolean;
  /** The router's backend pool per node. */
  poolSize: number;
  log(line: string): void;
}

export async function startShardedCluster(o: ShardedClusterOptions): Promise<ShardedCluster> {
  const maxConnections = Math.max(300, 4 * o.maxClients + 50);
  o.log(
    `starting ${DATA_NODES + 2} Postgres servers: catalog, ${DATA_NODES} data nodes, single (max_connections=${maxConnections})`,
  );
  const servers = await startPostgresCluster(DATA_NODES + 2, {
    name: o.name,
    settings: {
      max_connections: String(maxConnections),
      // Every client may hold a prepared transaction on a node at once during a two-phase commit.
      max_prepared_transactions: String(Math.max(64, 2 * o.maxClients + 10)),
    },
  });
  const [home, ...rest] = servers as [PgServer, ...PgServer[]];
  const data = rest.slice(0, DATA_NODES);
  const single = rest[DATA_NODES]!;
  const infos: TargetInfo[] = [];
  let catalog: BenchCatalog | undefined;
  let router: Target | undefined;
  const stop = async () => {
    await router?.stop().catch(() => undefined);
    await catalog?.stop().catch(() => undefined);
    await Promise.all(servers.map((s) => s.dispose()));
  };
  try {
    for (const sql of o.tableDdl) await Promise.all([...data, single].map((s) => s.query(sql)));
    if (o.withRouter) {
      try {
        catalog = await startBenchCatalog({ home, data, keyspace: o.keyspace });
      } catch (e) {
        const reason = `no coordinator: ${e instanceof Error ? e.message : String(e)}`;
        infos.push({ name: 'router', skipped: reason });
        o.log(`  router SKIPPED: ${reason}`);
      }
    }
    if (catalog) {
      const s = await startRouter({
        coordinator: catalog.address,
        poolSize: o.poolSize,
        poolMode: o.opts.routerPoolMode,
        maxClients: o.maxClients + 20,
        startTimeoutMs: o.opts.routerStartTimeoutMs,
      });
      if (s.ok) {
        router = s.target;
        infos.push({ name: 'router', detail: `${s.target.detail}; ${catalog.detail}` });
        o.log(`  router       ${s.target.detail}`);
      } else {
        infos.push({ name: 'router', skipped: s.reason });
        o.log(`  router       SKIPPED: ${s.reason}`);
      }
    }
    infos.push({
      name: 'single',
      detail: `one plain Postgres holding every row, on ${single.host}:${single.port}`,
    });
  } catch (e) {
    await stop();
    throw e;
  }
  const ownersOf = async (keys: readonly bigint[]): Promise<number[]> => {
    if (!catalog) return keys.map((_, i) => i % DATA_NODES);
    const rows = await home.query<{ h: string }>(
      'select hashint8extended(k, $2)::text as h from unnest($1::bigint[]) with ordinality as u(k, n) order by n',
      [keys.map(String), catalog.seed.toString()],
    );
    return rows.map((r) => {
      const owner = ownerOf(catalog!.ranges, BigInt(r.h));
      const i = Number(/^data(\d+)$/.exec(owner ?? '')?.[1] ?? 0) - 1;
      if (i < 0) throw new Error(`no data node owns hash ${r.h} (owner ${owner ?? 'none'})`);
      return i;
    });
  };
  return { home, data, single, catalog, router, infos, ownersOf, stop };
}

/** A connected `pg` client on host:port (the caller ends it). */
export async function connectTo(at: { host: string; port: number }): Promise<pg.Client> {
  const client = new pg.Client({
    host: at.host,
    port: at.port,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 10_000,
  });
  client.on('error', () => undefined); // a dead proxy: the next query fails and says so
  await client.connect();
  return client;
}

/** `SQLSTATE: message` of a server error, or the message of anything else. */
export function describeError(e: unknown): { code: string | undefined; text: string } {
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  const sqlstate = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  return { code: sqlstate, text: sqlstate ? `${sqlstate}: ${message}` : message };
}

/** 0A000, feature_not_supported: how the router refuses what it cannot do across nodes. */
export const FEATURE_NOT_SUPPORTED = '0A000';
