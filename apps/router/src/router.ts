// startRouter: the listening socket, the catalog watcher, pools, metrics, and one Session per
// client connection. Programmatic (tests, `tessera up`) and behind main.ts.
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { hostname } from 'node:os';
import {
  TxnService,
  createClient,
  grpcDecisionLog,
  parseAddress,
  formatAddress,
} from '@tessera/proto';
import { createLogger, createMetrics, startMetricsServer, type Logger } from '@tessera/telemetry';
import { AnalysisCache, initSqlParser } from '@tessera/sql';
import { defaultConfig, type RouterConfig } from './config.js';
import { CatalogWatcher } from './catalog/watcher.js';
import { Pools } from './pool/pools.js';
import { routerMetrics } from './metrics.js';
import { CancelRegistry } from './cancel.js';
import { Session } from './session/session.js';
import { Connection } from './session/connection.js';
import { RouterError, SQLSTATE } from './errors.js';
import type { RouterServices } from './services.js';
import type { Snapshot } from '@tessera/keyspace';
import { VerifierSource } from './session/auth-verifiers.js';
import { loadTlsContext } from './session/tls.js';
import { acceptClient } from './client-socket.js';
import { SequenceBlocks } from './sequences/blocks.js';
import { EpochCache } from './sequences/columns.js';
import { coordinatorBlocks } from './sequences/coordinator-blocks.js';
import { DdlWatch } from './session/ddl-watch.js';
import { namesChanged } from './session/names.js';

/** Deadline of one Decide call (failed calls are retried for --decide-timeout-ms). */
const DECIDE_DEADLINE_MS = 5_000;

export interface RunningRouter {
  readonly port: number;
  readonly metricsPort: number;
  /** Resolves once a valid catalog is in use. */
  ready(): Promise<void>;
  /** The catalog in use now (tests). */
  catalog(): Snapshot | undefined;
  stop(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Set in a worker process of `--workers N` (workers.ts): which one it is, and the cancel relay. */
  worker?: WorkerIdentity;
}

export interface WorkerIdentity {
  readonly index: number;
  readonly count: number;
  /** Hands a CancelRequest for a session of worker `worker` to that worker. */
  forwardCancel(worker: number, pid: number, secret: number): void;
  /** Registers the handler for cancels other workers relayed to this one. */
  onRelayedCancel(cancelLocal: (pid: number, secret: number) => void): void;
}

export async function startRouter(
  config: Partial<RouterConfig> = {},
  opts: StartOptions = {},
): Promise<RunningRouter> {
  const worker = opts.worker;
  const cfg = worker ? workerConfig(defaultConfig(config), worker) : defaultConfig(config);
  const log = opts.logger ?? createLogger('router');
  // Read before listening, so a bad certificate stops the start with one sentence.
  const tls =
    cfg.tlsCert !== undefined && cfg.tlsKey !== undefined
      ? loadTlsContext(cfg.tlsCert, cfg.tlsKey)
      : undefined;
  await initSqlParser();
  const { host, port } = parseAddress(cfg.listen);
  const metrics = createMetrics('router');
  const pools = new Pools({
    size: cfg.poolSize,
    acquireTimeoutMs: cfg.acquireTimeoutMs,
    connectTimeoutMs: 10_000,
    nodePassword: cfg.nodePassword,
  });
  const rm = routerMetrics(
    metrics.registry,
    () => pools.usage(),
    () => watcher.lease.leftMs(),
    () => pools.acquireStats(),
  );
  const sessions = new Set<Session>();

  // Paused: nothing is read before acceptClient() picks how the connection is read.
  const server = createServer({ pauseOnConnect: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const boundPort = (server.address() as AddressInfo).port;
  // Each worker is a router of its own to the coordinator (it registers, acks catalogs and
  // starts 2PC transaction ids under this name), so the name carries the worker's index.
  const baseId = cfg.routerId ?? `router-${hostname()}-${boundPort}`;
  const routerId = worker && worker.count > 1 ? `${baseId}-w${worker.index}` : baseId;
  const watcher = new CatalogWatcher({
    coordinator: cfg.coordinator,
    routerId,
    address: formatAddress(host, boundPort),
    token: cfg.token,
    log,
    onSwap: (c) => {
      pools.retire(c);
      ddlWatch.follow();
    },
    drainTimeoutMs: cfg.drainTimeoutMs,
    onDrainDeadline: () => rm.drainDeadline(),
    onRenewal: (granted) => rm.leaseRenewal(granted),
  });
  const roleSecrets =
    cfg.auth === 'scram'
      ? new VerifierSource(
          {
            user: cfg.authUser,
            password: cfg.authPassword,
            connectTimeoutMs: 10_000,
            queryTimeoutMs: 10_000,
            ttlMs: 5_000,
            maxEntries: 10_000,
          },
          () => watcher.catalog,
        )
      : undefined;
  // Decide is idempotent, so a call that failed is retried for a while (a coordinator restarting
  // or a standby taking over) before the client is told its commit is in doubt.
  const txnClient = createClient(
    TxnService,
    cfg.coordinator,
    cfg.token !== undefined ? { token: cfg.token } : {},
  );
  const decisions = grpcDecisionLog(txnClient, {
    callDeadlineMs: Math.min(DECIDE_DEADLINE_MS, cfg.decideTimeoutMs),
    retryForMs: cfg.decideTimeoutMs,
  });
  const ddlWatch = new DdlWatch({
    user: cfg.authUser,
    password: cfg.authPassword ?? cfg.nodePassword,
    connectTimeoutMs: 10_000,
    catalog: () => watcher.catalog,
    changed: () => namesChanged(services),
    log,
    counted: () => rm.ddlNotified(),
  });
  const services: RouterServices = {
    config: cfg,
    catalog: () => watcher.catalog,
    epoch: () => watcher.epoch,
    nextEpoch: (after, timeoutMs) => watcher.epochs.next(after, timeoutMs),
    lease: watcher.lease,
    pools,
    // Texts that differ only in literals (psycopg2, Django: literal SQL) share one analysis shape.
    cache: new AnalysisCache(10_000, { normalizeLiterals: true }),
    metrics: rm,
    log,
    cancels: new CancelRegistry(
      worker && { index: worker.index, count: worker.count, forward: worker.forwardCancel },
    ),
    routerId,
    decisions,
    sequences: {
      blocks: new SequenceBlocks(coordinatorBlocks(txnClient)),
      tables: new EpochCache(),
      named: new EpochCache(),
    },
    tls,
    roleSecrets,
    ddlWatch,
  };
  worker?.onRelayedCancel((pid, secret) => services.cancels.cancelLocal(pid, secret));
  server.on('connection', (accepted: Socket) => {
    const open = (onBytes: (chunk: Buffer) => void): Socket =>
      acceptClient(accepted, onBytes, tls === undefined);
    const s = new Session(open, services, (ended) => {
      if (sessions.delete(ended)) rm.clientConnections.dec();
      services.cancels.unregister(ended.pid);
    });
    if (sessions.size >= cfg.maxClients) {
      s.refusal = new RouterError(
        SQLSTATE.tooManyConnections,
        'sorry, too many clients already',
        'FATAL',
      );
    } else {
      sessions.add(s);
      rm.clientConnections.inc();
    }
    void new Connection(s).run();
  });
  watcher.start();
  const metricsServer = await startMetricsServer(metrics.registry, { host, port: cfg.metricsPort });
  log.info(
    {
      listen: formatAddress(host, boundPort),
      coordinator: cfg.coordinator,
      metricsPort: metricsServer.port,
      poolMode: cfg.poolMode,
      poolSize: cfg.poolSize,
      auth: cfg.auth,
      tls: tls !== undefined,
      ...(worker ? { worker: worker.index, workers: worker.count } : {}),
    },
    'router listening',
  );

  return {
    port: boundPort,
    metricsPort: metricsServer.port,
    ready: () => watcher.ready(),
    catalog: () => watcher.catalog,
    async stop() {
      await watcher.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sessions) s.close();
      });
      pools.close();
      txnClient.close();
      roleSecrets?.close();
      ddlWatch.close();
      await metricsServer.close();
    },
  };
}

/** A worker's share: pools and client slots split among the workers, its own metrics port. */
function workerConfig(cfg: RouterConfig, w: WorkerIdentity): RouterConfig {
  return {
    ...cfg,
    poolSize: Math.max(1, Math.ceil(cfg.poolSize / w.count)),
    maxClients: Math.max(1, Math.ceil(cfg.maxClients / w.count)),
    metricsPort: cfg.metricsPort === 0 ? 0 : cfg.metricsPort + w.index,
  };
}
