// One coordinator: binds its gRPC port and metrics endpoint at once, then alternates between
// standing by (every call answers UNAVAILABLE) and terms as the active coordinator (holding the
// leader lock). A term ends when the lock is lost or stop() is called; the process then stands by
// again, so there is never more than one active coordinator.
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { validateRanges } from '@tessera/keyspace';
import {
  AdminService,
  AgentService,
  CatalogService,
  CoordinatorService,
  NodeRole,
  ReplicaState,
  JobService,
  RouterLeaseService,
  RouterService,
  TESSERA_SERVICES,
  TxnService,
  addReflection,
  formatAddress,
  isLoopback,
  parseAddress,
  type AddServiceOptions,
} from '@tessera/proto';
import {
  createLogger,
  createMetrics,
  grpcServerMetrics,
  startMetricsServer,
  type Logger,
} from '@tessera/telemetry';
import { Gauge } from 'prom-client';
import { AgentReports } from './agent-reports.js';
import { FailoverEngine } from './failover/engine.js';
import { Leases } from './failover/leases.js';
import { failoverMetrics } from './failover/metrics.js';
import { coordinatorService } from './grpc/coordinator-service.js';
import { parseCatalogUrl } from './leader/catalog-url.js';
import { leaderPool } from './leader/leader-pool.js';
import {
  DEFAULT_DECISION_RETENTION_MS,
  DEFAULT_LEASE_MARGIN_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_RECOVERY_INTERVAL_MS,
  redact,
  type CoordinatorConfig,
} from './config.js';
import { ConfigError, unavailable } from './errors.js';
import { adminService } from './grpc/admin-service.js';
import { agentService, handedOver } from './grpc/agent-service.js';
import { authorizer } from './grpc/auth.js';
import { catalogService } from './grpc/catalog-service.js';
import type { ActiveTerm, ServiceDeps } from './grpc/deps.js';
import { serve } from './grpc/edge.js';
import { jobService } from './grpc/job-service.js';
import { routerLeaseService } from './grpc/router-lease-service.js';
import { routerService } from './grpc/router-service.js';
import { txnService } from './grpc/txn-service.js';
import { LeaderLock } from './leader/leader-lock.js';
import { InDoubtResolver, nodeAuthFromUrl } from './recovery/in-doubt.js';
import { recoveryMetrics } from './recovery/metrics.js';
import { startRecoveryLoop, type RecoveryLoop } from './recovery/recovery-loop.js';
import { CatalogStore } from './store/catalog-store.js';
import { JobStore } from './store/jobs.js';
import { migrate } from './store/migrations.js';
import { RouterLeases } from './store/router-leases.js';
import { RouterStore } from './store/routers.js';
import { TxnLog } from './store/txn-log.js';
import { SequenceBlocks } from './store/sequence-blocks.js';
import { WatchHub } from './watch-hub.js';

/** How long a coordinator that lost the catalog keeps its agents to fail the home node over. */
const INTERIM_MS = 15_000;

export interface StartOptions {
  /** Defaults to a JSON logger on stdout. */
  log?: Logger;
}

export interface RunningCoordinator {
  /** The bound gRPC address, `host:port`. */
  readonly address: string;
  readonly metricsPort: number;
  /** Resolves the first time this coordinator becomes active; rejects if stopped before that. */
  readonly whenActive: Promise<void>;
  isActive(): boolean;
  /** Ends the term (releasing the leader lock), closes watches, the gRPC port and the metrics endpoint. */
  stop(): Promise<void>;
}

export async function startCoordinator(
  config: CoordinatorConfig,
  opts: StartOptions = {},
): Promise<RunningCoordinator> {
  const log =
    opts.log ??
    createLogger('coordinator', config.logLevel === undefined ? {} : { level: config.logLevel });
  const { host } = parseAddress(config.listen);
  const { registry } = createMetrics('coordinator');
  const calls = grpcServerMetrics(registry);
  const epochGauge = new Gauge({
    name: 'tessera_catalog_epoch',
    help: 'The catalog epoch this coordinator last published.',
    registers: [registry],
  });
  const activeGauge = new Gauge({
    name: 'tessera_coordinator_active',
    help: '1 while this coordinator holds the leader lock.',
    registers: [registry],
  });
  activeGauge.set(0);
  const recoveryStats = recoveryMetrics(registry);

  let term: ActiveTerm | undefined;
  const hub = new WatchHub({
    resync: () => (term ? term.store.read() : Promise.reject(unavailable('not active'))),
  });
  new Gauge({
    name: 'tessera_catalog_watchers',
    help: 'Open WatchCatalog streams.',
    registers: [registry],
    collect() {
      this.set(hub.watcherCount);
    },
  });
  const target = parseCatalogUrl(config.catalogUrl);
  const lock = new LeaderLock({ target, pollMs: config.standbyPollMs, log });
  const agents = new AgentReports(registry);
  let advertised = config.advertise ?? '';
  const onEpoch = (epoch: bigint): void => {
    epochGauge.set(Number(epoch));
  };
  const engine = new FailoverEngine({
    deps: {
      term: () => {
        if (!term) throw unavailable('this coordinator is a standby; call the active coordinator');
        return term;
      },
      hub,
      onEpoch,
    },
    agents,
    leases: new Leases(
      config.leaseMs ?? DEFAULT_LEASE_MS,
      config.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS,
    ),
    durability: config.durability ?? 'preferred',
    freshMs: config.reportFreshMs,
    log,
    metrics: failoverMetrics(registry),
    onHomeMoved: (hosts) => lock.setPreferred(hosts),
  });
  const deps: ServiceDeps = {
    log,
    hub,
    agents,
    term: () => {
      if (!term) throw unavailable('this coordinator is a standby; call the active coordinator');
      return term;
    },
    onEpoch,
    engine,
    self: () => advertised,
    isActive: () => term !== undefined,
    activeAddress: () => lock.activeAddress,
  };

  const server = new grpc.Server({
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
  });
  const serviceOpts: AddServiceOptions = {
    authorize: authorizer({
      isActive: () => term !== undefined,
      activeAddress: () => lock.activeAddress,
      acceptsAgents: () => engine.acceptsAgents(),
      requiredToken: isLoopback(host) ? undefined : config.adminToken,
    }),
    onCallEnd: (c) => calls.observe(c.service, c.method, c.code, c.seconds),
  };
  serve(server, CatalogService, catalogService(deps), log, serviceOpts);
  serve(server, RouterService, routerService(deps), log, serviceOpts);
  serve(server, AdminService, adminService(deps), log, serviceOpts);
  serve(server, JobService, jobService(deps), log, serviceOpts);
  serve(server, TxnService, txnService(deps), log, serviceOpts);
  serve(server, AgentService, agentService(deps), log, serviceOpts);
  serve(server, RouterLeaseService, routerLeaseService(deps), log, serviceOpts);
  serve(server, CoordinatorService, coordinatorService(deps), log, serviceOpts);
  addReflection(server, TESSERA_SERVICES);

  const port = await bind(server, config.listen);
  const address = formatAddress(host, port);
  if (advertised === '') advertised = address;
  let metrics;
  try {
    metrics = await startMetricsServer(registry, { host, port: config.metricsPort });
  } catch (e) {
    server.forceShutdown();
    throw new ConfigError(
      `cannot serve metrics on ${host}:${config.metricsPort}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  log.info(
    {
      listen: address,
      metricsPort: metrics.port,
      advertise: advertised,
      catalog: redact(config.catalogUrl),
      tokenRequired: !isLoopback(host),
    },
    'coordinator listening; taking the leader lock',
  );

  let markActive!: () => void;
  let failActive!: (e: Error) => void;
  const whenActive = new Promise<void>((resolve, reject) => {
    markActive = resolve;
    failActive = reject;
  });
  whenActive.catch(() => undefined); // a caller that never awaits it must not see an unhandled rejection

  const stopping = new AbortController();
  const where = { listen: address, metricsPort: metrics.port };
  engine.start();

  let backoff = false;
  const runTerm = async (): Promise<void> => {
    // Every read and write of the term goes over the session holding the leader lock.
    const pool = leaderPool(lock);
    let recovery: RecoveryLoop | undefined;
    let lostLock = false;
    try {
      const applied = await lock.session(migrate);
      if (applied.length > 0) log.info({ versions: applied }, 'catalog schema migrated');
      await lock.session((c) =>
        c.query(
          `insert into tessera.active_coordinator (singleton, address, since)
           values (true, $1, clock_timestamp())
           on conflict (singleton) do update set address = excluded.address, since = excluded.since`,
          [advertised],
        ),
      );
      const store = new CatalogStore(pool, { leaderPid: () => lock.pid });
      const catalog = await store.read();
      // A catalog whose keyspaces are not each covered exactly once is refused loudly, never used.
      // (Not buildSnapshot: a new cluster has no home node yet and must still be served.)
      for (const ks of catalog.keyspaces)
        validateRanges(
          ks.name,
          catalog.ranges.filter((r) => r.keyspace === ks.name),
        );
      const txns = new TxnLog(pool);
      const inDoubt = new InDoubtResolver({
        nodes: async () => {
          const c = hub.current ?? (await store.read());
          return { clusterUid: c.clusterUid, nodes: c.nodes };
        },
        txns,
        auth: nodeAuthFromUrl(target.urlFor(target.hosts[0]!)),
        graceMs: config.recoveryGraceMs,
        log,
        metrics: recoveryStats,
      });
      term = {
        store,
        jobs: new JobStore(pool),
        routers: new RouterStore(pool),
        leases: new RouterLeases(pool, {
          leaseMs: config.routerLeaseMs,
          staleMs: config.routerStaleMs,
        }),
        txns,
        sequences: new SequenceBlocks(pool),
        inDoubt,
      };
      hub.reset(catalog);
      epochGauge.set(Number(catalog.epoch));
      activeGauge.set(1);
      const home = catalog.nodes.find((n) => n.role === NodeRole.HOME);
      if (home)
        lock.setPreferred([
          `${home.host}:${home.port}`,
          ...home.replicas
            .filter((r) => r.state !== ReplicaState.FENCED)
            .map((r) => `${r.host}:${r.port}`),
        ]);
      engine.setMode({ kind: 'active' });
      log.info(
        {
          role: 'active',
          ...where,
          epoch: catalog.epoch.toString(),
          clusterUid: catalog.clusterUid,
          catalogServer: lock.host,
        },
        'coordinator is active',
      );
      markActive();
      recovery = startRecoveryLoop({
        resolver: inDoubt,
        pool,
        intervalMs: config.recoveryIntervalMs ?? DEFAULT_RECOVERY_INTERVAL_MS,
        retentionMs: config.decisionRetentionMs ?? DEFAULT_DECISION_RETENTION_MS,
        log,
        metrics: recoveryStats,
      });
      const stopped = new Promise<undefined>((resolve) => {
        if (stopping.signal.aborted) resolve(undefined);
        else stopping.signal.addEventListener('abort', () => resolve(undefined), { once: true });
      });
      const lost = await Promise.race([lock.lost(), stopped]);
      if (lost) {
        lostLock = true;
        log.error(
          { err: lost.message, ...where },
          'lost the leader lock; stepping down to standby',
        );
        // Give a healthy standby (polling every standbyPollMs) the first chance to take over.
        backoff = true;
      }
    } catch (e) {
      log.error(
        { err: e instanceof Error ? e.message : String(e), ...where },
        'could not become the active coordinator; will retry',
      );
      await sleep(config.standbyPollMs * 4, undefined, { signal: stopping.signal }).catch(
        () => undefined,
      );
    } finally {
      // The catalog may have gone with the home node's primary: for a while this coordinator
      // keeps its agents, so it can fail the home node over and follow the catalog there.
      const last = hub.current;
      if (lostLock && last && !stopping.signal.aborted)
        engine.setMode({ kind: 'interim', catalog: last, until: performance.now() + INTERIM_MS });
      else engine.setMode({ kind: 'standby' });
      await recovery?.stop();
      term = undefined;
      activeGauge.set(0);
      hub.close();
      await lock.release();
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      if (backoff) {
        backoff = false;
        await sleep(config.standbyPollMs * 3, undefined, { signal: stopping.signal }).catch(
          () => undefined,
        );
      }
      const got = await lock.acquire(
        stopping.signal,
        () => log.info({ role: 'standby', ...where }, 'coordinator is a standby'),
        // The catalog may still name this coordinator for a moment: then no hint, the agents
        // go on to the next address of their list.
        (active) => engine.endInterim(handedOver(active === advertised ? undefined : active)),
      );
      if (!got) break;
      await runTerm();
    }
  })();

  let stopPromise: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopPromise ??= (async () => {
      stopping.abort();
      failActive(new Error('the coordinator stopped before it became active'));
      await loop;
      engine.setMode({ kind: 'standby' });
      await engine.stop();
      hub.close(unavailable('the coordinator is shutting down'));
      await shutdown(server);
      await metrics.close().catch(() => undefined);
      log.info(where, 'coordinator stopped');
    })());

  return {
    address,
    metricsPort: metrics.port,
    whenActive,
    isActive: () => term !== undefined,
    stop,
  };
}

function bind(server: grpc.Server, listen: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) reject(new ConfigError(`cannot listen on ${listen}: ${err.message}`));
      else resolve(port);
    });
  });
}

/** Lets calls in flight finish for a moment, then cuts the rest. */
async function shutdown(server: grpc.Server): Promise<void> {
  const graceful = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  const done = new AbortController();
  const timer = sleep(2_000, undefined, { signal: done.signal }).then(
    () => server.forceShutdown(),
    () => undefined,
  );
  await Promise.race([graceful, timer]);
  done.abort();
}
