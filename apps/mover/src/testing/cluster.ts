// Test fixture: a Tessera cluster in miniature for the mover's tests. Real Postgres servers (home
// plus data nodes; the catalog on home), the real coordinator in-process with the nodes
// registered, a keyspace and tables declared and created through a real router (so the nodes
// carry the fences CREATE TABLE gives them), and movers started on demand. Never a mock.
import { startCoordinator, type RunningCoordinator } from '@tessera/coordinator';
import {
  AdminService,
  CatalogService,
  Code,
  JobService,
  JobState,
  KeyType,
  NodeRole,
  RpcError,
  createClient,
  type Client,
  type Job,
} from '@tessera/proto';
import { startRouter, type RunningRouter } from '@tessera/router';
import { createLogger } from '@tessera/telemetry';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
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

export async function startMoverCluster(opts: MoverClusterOptions = {}): Promise<MoverCluster> {
  const dataCount = opts.dataNodes ?? 2;
  const servers = await startPostgresCluster(1 + dataCount + (opts.spareNodes ?? 0), {
    name: 'mover-test',
  });
  const home = servers[0]!;
  const data = servers.slice(1, 1 + dataCount);
  await home.query('create database tessera_catalog');
  const coordinatorConfig = (listen: string) => ({
    catalogUrl: home.url('tessera_catalog'),
    listen,
    metricsPort: 0,
    standbyPollMs: 100,
    recoveryGraceMs: 2_000,
    recoveryIntervalMs: 500,
    ...(opts.routerStaleMs === undefined ? {} : { routerStaleMs: opts.routerStaleMs }),
  });
  let coordinator = await startCoordinator(coordinatorConfig('127.0.0.1:0'), {
    log: quiet('coordinator'),
  });
  await coordinator.whenActive;
  const admin = createClient(AdminService, coordinator.address);
  const jobs = createClient(JobService, coordinator.address, { channel: admin.grpcClient });
  const catalog = createClient(CatalogService, coordinator.address, { channel: admin.grpcClient });
  await admin.addNode({ name: 'home', host: '127.0.0.1', port: home.port, role: NodeRole.HOME });
  const byName = new Map<string, PgServer>([['home', home]]);
  for (const [i, s] of data.entries()) {
    await admin.addNode({
      name: `data${i + 1}`,
      host: '127.0.0.1',
      port: s.port,
      role: NodeRole.DATA,
    });
    byName.set(`data${i + 1}`, s);
  }
  for (const [i, s] of servers.slice(1 + dataCount).entries()) byName.set(`spare${i + 1}`, s);
  await admin.createKeyspace({
    name: 'accounts',
    keyType: KeyType.BIGINT,
    ranges: opts.ranges ?? 4,
    seed: 0n,
  });
  for (const t of opts.tables ?? [
    { name: 'accounts', keyColumn: 'id' },
    { name: 'entries', keyColumn: 'account_id' },
  ])
    await admin.distributeTable({
      schema: 'public',
      name: t.name,
      keyColumn: t.keyColumn,
      keyspace: 'accounts',
    });
  for (const t of opts.referenceTables ?? ['countries'])
    await admin.referenceTable({ schema: 'public', name: t });

  const router = await startRouter(
    { listen: '127.0.0.1:0', metricsPort: 0, coordinator: coordinator.address, poolSize: 8 },
    { logger: quiet('router') },
  );
  await router.ready();
  const routerUrl = (database = 'postgres') =>
    `postgresql://postgres@127.0.0.1:${router.port}/${database}`;
  const viaRouter = async (database = 'postgres') => {
    const c = new pg.Client({ connectionString: routerUrl(database) });
    await c.connect();
    return c;
  };
  const c = await viaRouter();
  try {
    for (const sql of opts.schema ?? DEFAULT_SCHEMA) await c.query(sql);
  } finally {
    await c.end();
  }
  const movers: RunningMover[] = [];
  let moverCount = 0;
  const moverConfig = (overrides: Partial<MoverConfig> = {}) =>
    defaultConfig({
      coordinator: coordinator.address,
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
    home,
    data,
    byName,
    get coordinator() {
      return coordinator;
    },
    admin,
    jobs,
    catalog,
    router,
    routerUrl,
    viaRouter,
    moverConfig,
    async startMover(overrides = {}, startOpts = {}) {
      const m = await startMover(moverConfig(overrides), { log: quiet('mover'), ...startOpts });
      movers.push(m);
      return m;
    },
    async restartCoordinator() {
      const address = coordinator.address;
      await coordinator.stop();
      for (let attempt = 0; ; attempt++) {
        try {
          coordinator = await startCoordinator(coordinatorConfig(address), {
            log: quiet('coordinator'),
          });
          break;
        } catch (e) {
          if (attempt >= 20) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await coordinator.whenActive;
      return coordinator;
    },
    async dispose() {
      for (const m of movers) await m.stop().catch(() => undefined);
      await router.stop().catch(() => undefined);
      admin.close();
      await coordinator.stop().catch(() => undefined);
      await Promise.all(servers.map((s) => s.dispose()));
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
