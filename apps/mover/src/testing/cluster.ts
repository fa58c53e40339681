// Test fixture: a Tessera cluster in miniature for the mover's tests. @tessera/testcluster's
// startCluster (real Postgres servers, home plus data nodes, the catalog on home, the nodes
// registered, a keyspace and tables declared) with the real coordinator in-process; the tables
// created through a real router (so the nodes carry the fences CREATE TABLE gives them), and
// movers started on demand. Never a mock.
import { startCoordinator, type RunningCoordinator } from '@tessera/coordinator';
import {
  Code,
  JobService,
  JobState,
  KeyType,
  RpcError,
  createClient,
  type AdminService,
  type CatalogService,
  type Client,
  type Job,
  type ShapeKeyspace,
  type ShapeTable,
} from '@tessera/proto';
import { startRouter, type RunningRouter } from '@tessera/router';
import { createLogger } from '@tessera/telemetry';
import { startCluster, type Cluster, type CoordinatorLauncher } from '@tessera/testcluster';
import type { PgServer } from '@tessera/testkit';
import pg from 'pg';
import { defaultConfig, type MoverConfig } from '../config.js';
import { startMover, type RunningMover, type StartOptions } from '../mover.js';

export const quiet = (service: string) =>
  createLogger(service, { level: process.env['TESSERA_TEST_LOG_LEVEL'] ?? 'silent' });

export interface MoverCluster {
  readonly home: PgServer;
  readonly data: readonly PgServer[];
  /** Every node by catalog name: home, data1, data2, ... */
  readonly byName: ReadonlyMap<string, PgServer>;
  readonly coordinator: RunningCoordinator;
  readonly admin: Client<typeof AdminService>;
  readonly jobs: Client<typeof JobService>;
  readonly catalog: Client<typeof CatalogService>;
  readonly router: RunningRouter;
  /** postgres://postgres@127.0.0.1:<router>/postgres */
  routerUrl(database?: string): string;
  /** A pg client through the router (the caller ends it). */
  viaRouter(database?: string): Promise<pg.Client>;
  startMover(overrides?: Partial<MoverConfig>, opts?: StartOptions): Promise<RunningMover>;
  moverConfig(overrides?: Partial<MoverConfig>): MoverConfig;
  restartCoordinator(): Promise<RunningCoordinator>;
  dispose(): Promise<void>;
}

export interface MoverClusterOptions {
  dataNodes?: number;
  ranges?: number;
  /** SQL run through the router after the catalog is set up (CREATE TABLE ...). */
  schema?: readonly string[];
  tables?: readonly { name: string; keyColumn: string }[];
  referenceTables?: readonly string[];
  /** Data nodes started but not registered (to add later). */
  spareNodes?: number;
  /** The coordinator's --router-stale-ms (lease-less routers count as gone after this). */
  routerStaleMs?: number;
}

export const DEFAULT_SCHEMA = [
  `create table accounts (id bigint primary key, balance bigint not null default 0, note text)`,
  `create table entries (account_id bigint not null, seq bigint not null, amount bigint not null,
     primary key (account_id, seq))`,
  `create table countries (code text primary key, name text not null)`,
];

/** The fixture's coordinator, in this process. */
const inProcess =
  (routerStaleMs: number | undefined): CoordinatorLauncher<RunningCoordinator> =>
  ({ catalogUrl, listen }) =>
    startCoordinator(
      {
        catalogUrl,
        listen,
        metricsPort: 0,
        standbyPollMs: 100,
        recoveryGraceMs: 2_000,
        recoveryIntervalMs: 500,
        ...(routerStaleMs === undefined ? {} : { routerStaleMs }),
      },
      { log: quiet('coordinator') },
    );

const DEFAULT_TABLES = [
  { name: 'accounts', keyColumn: 'id' },
  { name: 'entries', keyColumn: 'account_id' },
];

function shapeOf(opts: MoverClusterOptions): { keyspaces: ShapeKeyspace[]; tables: ShapeTable[] } {
  const sharded = (opts.tables ?? DEFAULT_TABLES).map((t): ShapeTable => ({
    kind: 'sharded',
    keyspace: 'accounts',
    ...t,
  }));
  const reference = (opts.referenceTables ?? ['countries']).map((name): ShapeTable => ({
    kind: 'reference',
    name,
  }));
  return {
    keyspaces: [{ name: 'accounts', keyType: KeyType.BIGINT, ranges: opts.ranges ?? 4 }],
    tables: [...sharded, ...reference],
  };
}

/** Runs `statements` through the router at `url`, one after another. */
async function runThrough(url: string, statements: readonly string[]): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const sql of statements) await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function startMoverCluster(opts: MoverClusterOptions = {}): Promise<MoverCluster> {
  const base = await startCluster({
    name: 'mover-test',
    dataNodes: opts.dataNodes ?? 2,
    spareNodes: opts.spareNodes ?? 0,
    launch: inProcess(opts.routerStaleMs),
    ...shapeOf(opts),
  });
  const byName = new Map(base.byName);
  for (const [i, s] of base.spares.entries()) byName.set(`spare${i + 1}`, s);
  const channel = { channel: base.admin.grpcClient };
  const jobs = createClient(JobService, base.coordinator.address, channel);
  let router: RunningRouter | undefined;
  try {
    router = await startRouter(
      { listen: '127.0.0.1:0', metricsPort: 0, coordinator: base.coordinator.address, poolSize: 8 },
      { logger: quiet('router') },
    );
    await router.ready();
    await runThrough(routerAt(router)(), opts.schema ?? DEFAULT_SCHEMA);
  } catch (e) {
    await router?.stop().catch(() => undefined);
    await base.dispose();
    throw e;
  }
  return moverCluster(base, byName, jobs, router);
}

const routerAt =
  (router: RunningRouter) =>
  (database = 'postgres') =>
    `postgresql://postgres@127.0.0.1:${router.port}/${database}`;

function moverCluster(
  base: Cluster<RunningCoordinator>,
  byName: ReadonlyMap<string, PgServer>,
  jobs: Client<typeof JobService>,
  router: RunningRouter,
): MoverCluster {
  const routerUrl = routerAt(router);
  const movers: RunningMover[] = [];
  let moverCount = 0;
  const moverConfig = (overrides: Partial<MoverConfig> = {}) =>
    defaultConfig({
      coordinator: base.coordinator.address,
      moverId: `test-mover-${process.pid}-${moverCount++}`,
      metricsPort: 0,
      leaseMs: 3_000,
      pollMs: 50,
      catchupBudgetMs: 200,
      preparedWaitMs: 5_000,
      deleteRowsPerSec: 0,
      ...overrides,
    });
  return {
    home: base.home,
    data: base.data,
    byName,
    get coordinator() {
      return base.coordinator;
    },
    admin: base.admin,
    jobs,
    catalog: base.catalog,
    router,
    routerUrl,
    async viaRouter(database = 'postgres') {
      const c = new pg.Client({ connectionString: routerUrl(database) });
      await c.connect();
      return c;
    },
    moverConfig,
    async startMover(overrides = {}, startOpts = {}) {
      const m = await startMover(moverConfig(overrides), { log: quiet('mover'), ...startOpts });
      movers.push(m);
      return m;
    },
    restartCoordinator: () => base.restartCoordinator(),
    async dispose() {
      for (const m of movers) await m.stop().catch(() => undefined);
      await router.stop().catch(() => undefined);
      await base.dispose();
    },
  };
}

const FINAL = new Set([JobState.DONE, JobState.FAILED, JobState.CANCELLED, JobState.VERIFY_FAILED]);

/** Polls the job until it ends (or `timeoutMs`), and returns it. */
export async function waitForJob(
  jobs: Client<typeof JobService>,
  id: bigint,
  timeoutMs = 120_000,
): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let job: Job;
    try {
      job = await jobs.getJob({ id });
    } catch (e) {
      // The coordinator restarting (a test does that): ask again.
      if (!(e instanceof RpcError) || e.code !== Code.UNAVAILABLE || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    if (FINAL.has(job.state)) return job;
    if (Date.now() > deadline)
      throw new Error(
        `job ${id} did not end within ${timeoutMs} ms (state ${JobState[job.state]}, phase ${job.phase})`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls until the job is in `phase` (or has passed it: ended). */
export async function waitForPhase(
  jobs: Client<typeof JobService>,
  id: bigint,
  phase: string,
  timeoutMs = 60_000,
): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await jobs.getJob({ id });
    if (job.phase === phase || FINAL.has(job.state)) return job;
    if (Date.now() > deadline)
      throw new Error(`job ${id} never reached phase ${phase} (now ${job.phase})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Publications, subscriptions and replication slots on every node (there should be none). */
export async function replicationLeftovers(servers: Iterable<PgServer>): Promise<string[]> {
  const out: string[] = [];
  for (const s of servers) {
    const dbs = await s.query<{ datname: string }>(
      `select datname from pg_database where datallowconn and not datistemplate`,
    );
    for (const { datname } of dbs) {
      const pubs = await s.query<{ n: string }>(
        'select pubname as n from pg_publication',
        [],
        datname,
      );
      const subs = await s.query<{ n: string }>(
        'select subname as n from pg_subscription where subdbid = (select oid from pg_database where datname = current_database())',
        [],
        datname,
      );
      out.push(...pubs.map((p) => `${s.name}/${datname} publication ${p.n}`));
      out.push(...subs.map((p) => `${s.name}/${datname} subscription ${p.n}`));
    }
    const slots = await s.query<{ n: string }>('select slot_name as n from pg_replication_slots');
    out.push(...slots.map((p) => `${s.name} slot ${p.n}`));
  }
  return out;
}

/** The move spec and steps, as the CLI submits them. */
export function moveRequest(keyspace: string, lo: bigint, to: string, planOnly = false) {
  return {
    kind: 'move',
    specJson: JSON.stringify({
      keyspace,
      lo: lo.toString(),
      to,
      ...(planOnly ? { planOnly } : {}),
    }),
    steps: ['plan', 'prepare', 'copy', 'sync', 'cutover', 'verify', 'teardown', 'delete'],
  };
}

/** A value as a SQL literal (test data: numbers, bigints, strings, null). */
function sqlLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return `'${String(v).replace(/'/g, "''")}'`;
}

/**
 * Inserts rows through a router in multi-row VALUES batches sent as simple queries (INSERT ...
 * SELECT, and prepared INSERTs over several nodes, are refused there).
 */
export async function bulkInsert(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  batch = 500,
): Promise<void> {
  for (let i = 0; i < rows.length; i += batch) {
    const values = rows.slice(i, i + batch).map((r) => `(${r.map(sqlLiteral).join(', ')})`);
    await client.query(`insert into ${table} (${columns.join(', ')}) values ${values.join(', ')}`);
  }
}
