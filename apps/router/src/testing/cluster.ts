// Test fixture: a real Tessera cluster in miniature. @tessera/testcluster's startCluster (three
// Postgres servers, home + two data nodes, the catalog database on home, the nodes registered,
// keyspaces and tables declared) with the real coordinator in-process, and a router on a free
// port. Never a mock.
import {
  startCoordinator,
  type CoordinatorConfig,
  type RunningCoordinator,
} from '@tessera/coordinator';
import { KeyType, type AdminService, type Client, type ShapeTable } from '@tessera/proto';
import { createLogger } from '@tessera/telemetry';
import { startCluster, type CoordinatorLauncher } from '@tessera/testcluster';
import type { PgServer } from '@tessera/testkit';
import { startRouter, type RunningRouter } from '../router.js';
import type { RouterConfig } from '../config.js';

export interface TableDecl {
  readonly name: string;
  readonly kind: 'sharded' | 'reference';
  readonly keyspace?: string;
  readonly keyColumn?: string;
  readonly schema?: string;
}

export interface KeyspaceDecl {
  readonly name: string;
  readonly keyType: KeyType;
  readonly ranges?: number;
  readonly seed?: bigint;
}

export interface ClusterOptions {
  keyspaces?: readonly KeyspaceDecl[];
  tables?: readonly TableDecl[];
  router?: Partial<RouterConfig>;
  /** Coordinator settings over the fixture's (e.g. routerLeaseMs). */
  coordinator?: Partial<CoordinatorConfig>;
  /** Data nodes (the keyspaces' ranges are spread over them); default 2. */
  dataNodes?: number;
}

export interface TestCluster {
  readonly home: PgServer;
  readonly data: readonly PgServer[];
  /** Every node by catalog name: home, data1, data2. */
  readonly byName: ReadonlyMap<string, PgServer>;
  readonly coordinator: RunningCoordinator;
  readonly admin: Client<typeof AdminService>;
  readonly router: RunningRouter;
  /** postgres://postgres@127.0.0.1:<router port>/<db> */
  url(database?: string): string;
  /** Restarts the router (same coordinator and nodes) with other settings. */
  restartRouter(config?: Partial<RouterConfig>): Promise<RunningRouter>;
  /**
   * Stops the coordinator and starts it again on the same catalog and address (a crash and
   * restart as routers see it: calls fail until it is back, then its recovery loop runs).
   */
  restartCoordinator(opts?: { downMs?: number }): Promise<RunningCoordinator>;
  dispose(): Promise<void>;
}

export const DEFAULT_KEYSPACES: readonly KeyspaceDecl[] = [
  { name: 'tenants', keyType: KeyType.BIGINT, ranges: 4, seed: 0n },
  { name: 'users', keyType: KeyType.UUID, ranges: 4, seed: 17n },
];

export const DEFAULT_TABLES: readonly TableDecl[] = [
  { name: 'orders', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
  { name: 'order_items', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
  { name: 'profiles', kind: 'sharded', keyspace: 'users', keyColumn: 'id' },
  { name: 'countries', kind: 'reference' },
];

const quiet = (service: string) =>
  createLogger(service, { level: process.env['TESSERA_TEST_LOG_LEVEL'] ?? 'silent' });

/** The fixture's coordinator, in this process, with `overrides` over its settings. */
const inProcess =
  (overrides: Partial<CoordinatorConfig> = {}): CoordinatorLauncher<RunningCoordinator> =>
  ({ catalogUrl, listen }) =>
    startCoordinator(
      {
        catalogUrl,
        listen,
        metricsPort: 0,
        standbyPollMs: 100,
        recoveryGraceMs: 10_000,
        recoveryIntervalMs: 500,
        ...overrides,
      },
      { log: quiet('coordinator') },
    );

function shapeTable(t: TableDecl): ShapeTable {
  if (t.kind === 'reference') return { kind: 'reference', name: t.name, schema: t.schema };
  if (!t.keyspace || !t.keyColumn)
    throw new Error(`sharded table ${t.name} needs a keyspace and key column`);
  return { ...t, kind: 'sharded', keyspace: t.keyspace, keyColumn: t.keyColumn };
}

export async function startTestCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const base = await startCluster({
    name: 'router-test',
    launch: inProcess(opts.coordinator),
    ...(opts.dataNodes === undefined ? {} : { dataNodes: opts.dataNodes }),
    keyspaces: (opts.keyspaces ?? DEFAULT_KEYSPACES).map((k) => ({ ...k, ranges: k.ranges ?? 4 })),
    tables: (opts.tables ?? DEFAULT_TABLES).map(shapeTable),
  });
  const routerConfig = (extra: Partial<RouterConfig> = {}): Partial<RouterConfig> => ({
    listen: '127.0.0.1:0',
    metricsPort: 0,
    coordinator: base.coordinator.address,
    ...opts.router,
    ...extra,
  });
  let router: RunningRouter;
  try {
    router = await startRouter(routerConfig(), { logger: quiet('router') });
    await router.ready();
  } catch (e) {
    await base.dispose();
    throw e;
  }
  return {
    home: base.home,
    data: base.data,
    byName: base.byName,
    get coordinator() {
      return base.coordinator;
    },
    admin: base.admin,
    get router() {
      return router;
    },
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${router.port}/${database}`,
    async restartRouter(config = {}) {
      await router.stop();
      router = await startRouter(routerConfig(config), { logger: quiet('router') });
      await router.ready();
      return router;
    },
    restartCoordinator: (o) => base.restartCoordinator(o),
    async dispose() {
      await router.stop().catch(() => undefined);
      await base.dispose();
    },
  };
}

/** Another router on `c`'s coordinator, default settings but `config`, serving once it has a catalog. */
export async function startSecondRouter(
  c: TestCluster,
  config: Partial<RouterConfig> = {},
): Promise<RunningRouter> {
  const r = await startRouter(
    {
      listen: '127.0.0.1:0',
      metricsPort: 0,
      coordinator: c.coordinator.address,
      ...config,
    },
    { logger: quiet('router') },
  );
  await r.ready();
  return r;
}
