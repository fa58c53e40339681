// One Tessera cluster for tests, benches and soak: real Postgres servers (home plus data nodes),
// the catalog database on home, a coordinator over it, and the cluster's shape declared through
// the coordinator. The coordinator is started by the caller's launcher (in-process
// `startCoordinator`, or a child process): testkit is a library and may not import an app.
// Routers are the caller's for the same reason; they need only `coordinator.address`.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AdminService,
  CatalogService,
  NodeRole,
  createClient,
  declareShape,
  type Client,
  type ShapeKeyspace,
  type ShapeTable,
} from '@tessera/proto';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';

/** What startCluster needs of a coordinator, however it runs. */
export interface LaunchedCoordinator {
  /** host:port of its gRPC server. */
  readonly address: string;
  /** Resolves once it holds the leader lock. */
  readonly whenActive: Promise<void>;
  /** A clean stop that releases the leader lock and the port. */
  stop(): Promise<void>;
}

/**
 * Starts a coordinator over `catalogUrl` listening on `listen` (`127.0.0.1:0` the first time,
 * the address it had on a restart).
 */
export type CoordinatorLauncher<C extends LaunchedCoordinator> = (at: {
  catalogUrl: string;
  listen: string;
}) => Promise<C>;

export interface TesseraOptions<C extends LaunchedCoordinator> {
  launch: CoordinatorLauncher<C>;
  keyspaces?: readonly ShapeKeyspace[];
  tables?: readonly ShapeTable[];
  /** The catalog database on home, created if missing; default `tessera_catalog`. */
  catalogDatabase?: string;
  /** Catalog names of the registered nodes, home first; default home, data1, data2, ... */
  nodeNames?: readonly string[];
  /** Deadline of every call of `admin` and `catalog`; none unless given. */
  clientDeadlineMs?: number;
}

/** The Tessera side of a cluster: catalog, coordinator, clients; the servers are someone's. */
export interface Tessera<C extends LaunchedCoordinator> {
  readonly home: PgServer;
  readonly data: readonly PgServer[];
  /** Every registered node by catalog name. */
  readonly byName: ReadonlyMap<string, PgServer>;
  readonly catalogUrl: string;
  /** The running coordinator (a new one after restartCoordinator). */
  readonly coordinator: C;
  readonly admin: Client<typeof AdminService>;
  /** Shares `admin`'s connection. */
  readonly catalog: Client<typeof CatalogService>;
  /**
   * Stops the coordinator and starts it again on the same catalog and address (a crash and
   * restart as routers see it: calls fail until it is back); resolves once it is active.
   */
  restartCoordinator(opts?: { downMs?: number }): Promise<C>;
  /** Closes the clients and stops the coordinator. */
  dispose(): Promise<void>;
}

export interface ClusterOptions<C extends LaunchedCoordinator> extends TesseraOptions<C> {
  /** A label for the servers' logs and directories. */
  name?: string;
  /** Registered data nodes; default 2. */
  dataNodes?: number;
  /** Servers started as well but not registered (nodes a test adds later). */
  spareNodes?: number;
  /** postgresql.conf settings of every server. */
  settings?: Record<string, string>;
}

export interface Cluster<C extends LaunchedCoordinator> extends Tessera<C> {
  /** home, the data nodes, then the spares. */
  readonly servers: readonly PgServer[];
  readonly spares: readonly PgServer[];
  /** Stops the coordinator and removes every server. */
  dispose(): Promise<void>;
}

/** Starts the servers, then a coordinator with the shape declared (see attachCluster). */
export async function startCluster<C extends LaunchedCoordinator>(
  opts: ClusterOptions<C>,
): Promise<Cluster<C>> {
  const dataCount = opts.dataNodes ?? 2;
  const servers = await startPostgresCluster(1 + dataCount + (opts.spareNodes ?? 0), {
    ...(opts.name === undefined ? {} : { name: opts.name }),
    ...(opts.settings === undefined ? {} : { settings: opts.settings }),
  });
  const disposeServers = () => Promise.all(servers.map((s) => s.dispose()));
  const [home, ...rest] = servers as [PgServer, ...PgServer[]];
  let t: Tessera<C>;
  try {
    t = await attachCluster(home, rest.slice(0, dataCount), opts);
  } catch (e) {
    await disposeServers();
    throw e;
  }
  return {
    servers,
    spares: rest.slice(dataCount),
    home,
    data: t.data,
    byName: t.byName,
    catalogUrl: t.catalogUrl,
    get coordinator() {
      return t.coordinator;
    },
    admin: t.admin,
    catalog: t.catalog,
    restartCoordinator: (o) => t.restartCoordinator(o),
    async dispose() {
      await t.dispose();
      await disposeServers();
    },
  };
}

/**
 * A Tessera cluster over servers the caller runs: the catalog database on `home`, a coordinator
 * from `opts.launch`, `home` and `data` registered, keyspaces and tables declared.
 */
export async function attachCluster<C extends LaunchedCoordinator>(
  home: PgServer,
  data: readonly PgServer[],
  opts: TesseraOptions<C>,
): Promise<Tessera<C>> {
  const catalogUrl = await ensureDatabase(home, opts.catalogDatabase ?? 'tessera_catalog');
  const nodes = [home, ...data];
  const byName = new Map(nodeNames(data.length, opts.nodeNames).map((n, i) => [n, nodes[i]!]));
  let coordinator = await opts.launch({ catalogUrl, listen: '127.0.0.1:0' });
  const deadline = opts.clientDeadlineMs === undefined ? {} : { deadlineMs: opts.clientDeadlineMs };
  const admin = createClient(AdminService, coordinator.address, deadline);
  const catalog = createClient(CatalogService, coordinator.address, {
    ...deadline,
    channel: admin.grpcClient,
  });
  const dispose = async () => {
    admin.close();
    await coordinator.stop().catch(() => undefined);
  };
  try {
    await coordinator.whenActive;
    const { keyspaces, tables } = opts;
    await declareShape({ admin, catalog }, { nodes: shapeNodes(byName, home), keyspaces, tables });
  } catch (e) {
    await dispose();
    throw e;
  }
  return {
    home,
    data,
    byName,
    catalogUrl,
    get coordinator() {
      return coordinator;
    },
    admin,
    catalog,
    async restartCoordinator({ downMs = 0 } = {}) {
      const address = coordinator.address;
      await coordinator.stop();
      if (downMs > 0) await sleep(downMs);
      coordinator = await relaunch(opts.launch, { catalogUrl, listen: address });
      await coordinator.whenActive;
      return coordinator;
    },
    dispose,
  };
}

function nodeNames(dataCount: number, given: readonly string[] | undefined): string[] {
  const names = given?.slice(0, 1 + dataCount) ?? [
    'home',
    ...Array.from({ length: dataCount }, (_, i) => `data${i + 1}`),
  ];
  if (names.length !== 1 + dataCount)
    throw new Error(`${1 + dataCount} node names needed, got ${names.join(', ')}`);
  return names;
}

function shapeNodes(byName: ReadonlyMap<string, PgServer>, home: PgServer) {
  return [...byName].map(([name, s]) => ({
    name,
    host: s.host,
    port: s.port,
    role: s === home ? NodeRole.HOME : NodeRole.DATA,
  }));
}

/** Creates `database` on `server` unless it is there (a bench may attach twice); its URL. */
async function ensureDatabase(server: PgServer, database: string): Promise<string> {
  const found = await server.query('select 1 from pg_database where datname = $1', [database]);
  if (found.length === 0) await server.query(`create database "${database}"`);
  return server.url(database);
}

/** The port was just released and another process could take it meanwhile: retry a moment. */
async function relaunch<C extends LaunchedCoordinator>(
  launch: CoordinatorLauncher<C>,
  at: { catalogUrl: string; listen: string },
): Promise<C> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await launch(at);
    } catch (e) {
      if (attempt >= 20) throw e;
      await sleep(100);
    }
  }
}
