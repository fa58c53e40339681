// Test fixture: a real Tessera cluster in miniature. Three Postgres servers (home + two data
// nodes, the catalog database on home), the real coordinator in-process with the nodes
// registered, keyspaces and tables declared, and a router on a free port. Never a mock.
import {
  startCoordinator,
  type CoordinatorConfig,
  type RunningCoordinator,
} from '@tessera/coordinator';
import { AdminService, KeyType, NodeRole, createClient, type Client } from '@tessera/proto';
import { createLogger } from '@tessera/telemetry';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
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

export async function startTestCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const servers = await startPostgresCluster(3, { name: 'router-test' });
  const [home, data1, data2] = servers as [PgServer, PgServer, PgServer];
  await home.query('create database tessera_catalog');
  const coordinatorConfig = (listen: string) => ({
    catalogUrl: home.url('tessera_catalog'),
    listen,
    metricsPort: 0,
    standbyPollMs: 100,
    recoveryGraceMs: 10_000,
    recoveryIntervalMs: 500,
    ...opts.coordinator,
  });
  let coordinator = await startCoordinator(coordinatorConfig('127.0.0.1:0'), {
    log: quiet('coordinator'),
  });
  await coordinator.whenActive;
  const admin = createClient(AdminService, coordinator.address);
  await admin.addNode({ name: 'home', host: '127.0.0.1', port: home.port, role: NodeRole.HOME });
  await admin.addNode({ name: 'data1', host: '127.0.0.1', port: data1.port, role: NodeRole.DATA });
  await admin.addNode({ name: 'data2', host: '127.0.0.1', port: data2.port, role: NodeRole.DATA });
  for (const ks of opts.keyspaces ?? DEFAULT_KEYSPACES) {
    await admin.createKeyspace({
      name: ks.name,
      keyType: ks.keyType,
      ranges: ks.ranges ?? 4,
      seed: ks.seed ?? 0n,
    });
  }
  for (const t of opts.tables ?? DEFAULT_TABLES) {
    if (t.kind === 'sharded') {
      await admin.distributeTable({
        schema: t.schema ?? 'public',
        name: t.name,
        keyColumn: t.keyColumn!,
        keyspace: t.keyspace!,
      });
    } else {
      await admin.referenceTable({ schema: t.schema ?? 'public', name: t.name });
    }
  }
  const routerConfig = (extra: Partial<RouterConfig> = {}): Partial<RouterConfig> => ({
    listen: '127.0.0.1:0',
    metricsPort: 0,
    coordinator: coordinator.address,
    ...opts.router,
    ...extra,
  });
  let router = await startRouter(routerConfig(), { logger: quiet('router') });
  await router.ready();
  const byName = new Map([
    ['home', home],
    ['data1', data1],
    ['data2', data2],
  ]);
  const cluster: TestCluster = {
    home,
    data: [data1, data2],
    byName,
    get coordinator() {
      return coordinator;
    },
    admin,
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
    async restartCoordinator({ downMs = 0 } = {}) {
      const address = coordinator.address;
      await coordinator.stop();
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      // The port was just released; another process could take it, so retry a moment.
      for (let attempt = 0; ; attempt++) {
        try {
          coordinator = await startCoordinator(coordinatorConfig(address), {
            log: quiet('coordinator'),
          });
          break;
        } catch (e) {
          if (attempt >= 20) throw e;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      await coordinator.whenActive;
      return coordinator;
    },
    async dispose() {
      await router.stop().catch(() => undefined);
      admin.close();
      await coordinator.stop().catch(() => undefined);
      await Promise.all(servers.map((s) => s.dispose()));
    },
  };
  return cluster;
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
