// `tessera up`: prepare the local cluster's directory, start the supervisor (detached, or in this
// process with --foreground), wait until the services answer, bootstrap the catalog and sample
// schema on the first run, and print how to connect.
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { findPgBinDir } from '@tessera/pgctl';
import { connectCoordinator } from '../coordinator.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { CLI_BIN } from '../paths.js';
import { bootstrap } from './bootstrap.js';
import {
  LOCAL_NODES,
  layout,
  readClusterFile,
  writeClusterFile,
  type ClusterFile,
  type Layout,
} from './layout.js';
import { authOf, clusterPasswords, ensurePasswords, type ClusterPasswords } from './passwords.js';
import { choosePort } from './ports.js';
import { checkServerUserCanReach, initNodes } from './postgres-nodes.js';
import { childEnv, isRunning, liveSupervisorPid } from './processes.js';
import { APP_DATABASE, APP_PASSWORD, APP_ROLE } from './sample-schema.js';
import { SERVICES, coordinatorAddressOf, coordinatorListOf } from './services.js';
import { Supervisor } from './supervisor.js';

const DEFAULT_PORTS = {
  coordinator: 7400,
  coordinatorMetrics: 7401,
  standbyCoordinator: 7402,
  standbyCoordinatorMetrics: 7403,
  router: 6432,
  routerMetrics: 7411,
  moverMetrics: 7421,
};

/** Each node's replica, when it has one: 10 above its primary's default port. */
const REPLICA_PORT_OFFSET = 10;

export interface UpOptions {
  dir: string;
  foreground: boolean;
  io: Io;
  /** The lighter cluster: one server per node, no replicas, one coordinator (first up only). */
  noReplicas?: boolean;
  /** No passwords anywhere, as before they were the default (first up only). */
  trust?: boolean;
  /** How long to wait for the services to answer. */
  readyTimeoutMs?: number;
}

export async function up(opts: UpOptions): Promise<number> {
  const { io } = opts;
  const l = layout(opts.dir);
  const binDir = findPgBinDir(io.env);
  const timeoutMs = opts.readyTimeoutMs ?? 60_000;

  const running = liveSupervisorPid(l);
  if (running !== undefined) {
    const cluster = readClusterFile(l);
    if (!cluster)
      throw new CliError(
        `a supervisor (pid ${running}) runs for ${l.dir} but ${l.clusterFile} is missing; run \`tessera down\` first`,
      );
    const passwords = clusterPasswords(l, cluster);
    await becomeReady(l, cluster, passwords, running, io, timeoutMs);
    io.out(`Tessera is already running in ${l.dir}.\n\n${summary(l, cluster, passwords)}`);
    return 0;
  }

  checkServerUserCanReach(l.dir);
  for (const d of [l.dir, l.logsDir, l.nodesDir]) {
    if (existsSync(d)) continue;
    mkdirSync(d, { recursive: true });
    // Explicitly, since a strict umask (077) would leave it closed to the `postgres` user.
    chmodSync(d, 0o755);
  }
  checkServerUserCanReach(l.nodesDir);
  const existing = readClusterFile(l);
  // A new cluster's passwords are made first: initdb sets the superuser's, and a cluster file
  // that says `scram` must never exist without them.
  if (!existing && !opts.trust) ensurePasswords(l);
  const cluster =
    existing ??
    (await chooseCluster(l, !(opts.noReplicas ?? false), opts.trust ? 'trust' : 'scram'));
  if (existing && opts.noReplicas && existing.replicas)
    io.out(`note: ${l.dir} was made with replicas; --no-replicas applies only to a new cluster\n`);
  if (existing && opts.trust && authOf(existing) === 'scram')
    io.out(`note: ${l.dir} was made with passwords; --trust applies only to a new cluster\n`);
  if (existing && !opts.trust && authOf(existing) === 'trust')
    io.out(
      `note: ${l.dir} was made without passwords (with --trust, or before passwords were the ` +
        `default) and stays so; a new cluster (tessera up --dir DIR) gets them\n`,
    );
  const passwords = clusterPasswords(l, cluster);
  const created = initNodes(l, binDir, cluster.replicas ?? false, passwords?.postgres);
  if (created.length > 0) {
    io.out(`initialised Postgres data directories: ${created.join(', ')}\n`);
    // A fresh node (or a fresh catalog on a fresh home node) needs the sample schema again.
    if (cluster.bootstrapped) writeClusterFile(l, Object.assign(cluster, { bootstrapped: false }));
  }

  if (opts.foreground) return runForeground(l, cluster, passwords, binDir, io, timeoutMs);

  const pid = spawnSupervisor(l);
  io.out(`starting the local cluster in ${l.dir} (supervisor pid ${pid}) ...\n`);
  await becomeReady(l, cluster, passwords, pid, io, timeoutMs);
  io.out(`\nTessera is up.\n\n${summary(l, cluster, passwords)}`);
  return 0;
}

async function chooseCluster(
  l: Layout,
  replicas: boolean,
  auth: 'scram' | 'trust',
): Promise<ClusterFile> {
  const taken = new Set<number>();
  const nodePorts = {} as ClusterFile['nodePorts'];
  for (const n of LOCAL_NODES) nodePorts[n.name] = await choosePort(n.defaultPort, taken);
  const cluster: ClusterFile = {
    version: 1,
    nodePorts,
    coordinatorPort: await choosePort(DEFAULT_PORTS.coordinator, taken),
    coordinatorMetricsPort: await choosePort(DEFAULT_PORTS.coordinatorMetrics, taken),
    routerPort: await choosePort(DEFAULT_PORTS.router, taken),
    routerMetricsPort: await choosePort(DEFAULT_PORTS.routerMetrics, taken),
    moverMetricsPort: await choosePort(DEFAULT_PORTS.moverMetrics, taken),
    bootstrapped: false,
    replicas,
    auth,
  };
  if (replicas) {
    const replicaPorts = {} as ClusterFile['nodePorts'];
    for (const n of LOCAL_NODES)
      replicaPorts[n.name] = await choosePort(n.defaultPort + REPLICA_PORT_OFFSET, taken);
    cluster.replicaPorts = replicaPorts;
    cluster.standbyCoordinatorPort = await choosePort(DEFAULT_PORTS.standbyCoordinator, taken);
    cluster.standbyCoordinatorMetricsPort = await choosePort(
      DEFAULT_PORTS.standbyCoordinatorMetrics,
      taken,
    );
  }
  writeClusterFile(l, cluster);
  return cluster;
}

/** Starts `tessera supervise --dir D` in its own session, logging to D/logs/supervisor.log. */
function spawnSupervisor(l: Layout): number {
  const out = openSync(l.logFile('supervisor'), 'a');
  const child = spawn(process.execPath, [CLI_BIN, 'supervise', '--dir', l.dir], {
    cwd: l.dir,
    env: childEnv({ TESSERA_HOME: l.dir }),
    stdio: ['ignore', out, out],
    detached: true,
  });
  closeSync(out);
  child.unref();
  if (child.pid === undefined)
    throw new CliError(`could not start the supervisor (${process.execPath} ${CLI_BIN})`);
  return child.pid;
}

function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Waits until the services of this build answer: the coordinator first (`first`), or every other
 * one. Fails fast when the supervisor dies, and on timeout points at the right log.
 */
async function waitUntilReady(
  l: Layout,
  cluster: ClusterFile,
  passwords: ClusterPasswords | undefined,
  supervisorPid: number,
  timeoutMs: number,
  which: 'coordinator' | 'others',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const spec of SERVICES) {
    if ((spec.name === 'coordinator') !== (which === 'coordinator')) continue;
    if (spec.enabled && !spec.enabled(cluster)) continue;
    if (!spec.entry()) {
      if (spec.name === 'coordinator')
        throw new CliError(`${spec.absentNote}; build it with \`npm run build\``);
      continue;
    }
    while (!(await spec.ready(cluster, passwords))) {
      if (!isRunning(supervisorPid)) {
        const log = l.logFile('supervisor');
        throw new CliError(
          `the supervisor stopped while starting the cluster; see ${log}:\n${tail(log)}`,
        );
      }
      if (Date.now() > deadline) {
        throw new CliError(
          `the ${spec.name} did not become ready within ${Math.round(timeoutMs / 1000)} s; ` +
            `see ${l.logFile(spec.name)} (and ${l.logFile('supervisor')}); the rest is left running for a look, ` +
            `\`tessera down${downDirArg(l)}\` stops it`,
        );
      }
      await sleep(200);
    }
  }
}

/** Waits for the coordinator, bootstraps on the first run, then waits for the other services. */
async function becomeReady(
  l: Layout,
  cluster: ClusterFile,
  passwords: ClusterPasswords | undefined,
  supervisorPid: number,
  io: Io,
  timeoutMs: number,
): Promise<void> {
  await waitUntilReady(l, cluster, passwords, supervisorPid, timeoutMs, 'coordinator');
  if (!cluster.bootstrapped) await bootstrapOnce(l, cluster, passwords, io);
  await waitUntilReady(l, cluster, passwords, supervisorPid, timeoutMs, 'others');
}

function downDirArg(l: Layout): string {
  return l.dir.endsWith('/.tessera') ? '' : ` --dir ${l.dir}`;
}

async function bootstrapOnce(
  l: Layout,
  cluster: ClusterFile,
  passwords: ClusterPasswords | undefined,
  io: Io,
): Promise<void> {
  const coord = connectCoordinator(coordinatorListOf(cluster), io.env.TESSERA_ADMIN_TOKEN);
  try {
    await bootstrap(coord, cluster, passwords, (m) => io.out(`${m}\n`));
  } finally {
    coord.close();
  }
  writeClusterFile(l, { ...cluster, bootstrapped: true });
  cluster.bootstrapped = true;
}

async function runForeground(
  l: Layout,
  cluster: ClusterFile,
  passwords: ClusterPasswords | undefined,
  binDir: string,
  io: Io,
  timeoutMs: number,
): Promise<number> {
  const sup = new Supervisor(l, cluster, binDir, (m) =>
    io.err(`${new Date().toISOString()} ${m}\n`),
  );
  let signalled: () => void = () => {};
  const stopRequested = new Promise<void>((resolve) => (signalled = resolve));
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.once(s, signalled);
  try {
    await sup.start();
    await becomeReady(l, cluster, passwords, process.pid, io, timeoutMs);
    io.out(`\nTessera is up (foreground; Ctrl-C stops it).\n\n${summary(l, cluster, passwords)}`);
    await stopRequested;
    return 0;
  } finally {
    for (const s of signals) process.off(s, signalled);
    await sup.stop();
    io.out('stopped\n');
  }
}

/** What `up` prints: how to connect, the ports, where the logs are, how to stop. */
export function summary(
  l: Layout,
  cluster: ClusterFile,
  passwords: ClusterPasswords | undefined,
): string {
  const router = SERVICES.find((s) => s.name === 'router');
  const routerBuilt = router?.entry() !== undefined;
  const appPassword = passwords?.app ?? APP_PASSWORD;
  const url = (port: number) =>
    `postgresql://${APP_ROLE}:${appPassword}@127.0.0.1:${port}/${APP_DATABASE}`;
  const lines = [`  connect:      ${url(cluster.routerPort)}`];
  lines.push(
    passwords
      ? `  superuser:    postgres, password ${passwords.postgres} (both in ${l.passwordsFile})`
      : `  auth:         trust: no passwords asked, the router and nodes let any local user in`,
  );
  if (!routerBuilt)
    lines.push(
      `                (${router?.absentNote ?? 'the router is not part of this build yet'})`,
    );
  lines.push(
    `  nodes:        ${LOCAL_NODES.map((n) => `${n.name.padEnd(6)} ${url(cluster.nodePorts[n.name])}`).join('\n                ')}`,
  );
  if (cluster.replicas && cluster.replicaPorts) {
    const rp = cluster.replicaPorts;
    lines.push(
      `  replicas:     ${LOCAL_NODES.map((n) => `${n.name.padEnd(6)} 127.0.0.1:${rp[n.name]} (synchronous, streaming)`).join('\n                ')}`,
    );
  }
  lines.push(
    `  coordinator:  ${coordinatorAddressOf(cluster)} (gRPC), metrics http://127.0.0.1:${cluster.coordinatorMetricsPort}/metrics`,
  );
  if (cluster.standbyCoordinatorPort)
    lines.push(
      `                127.0.0.1:${cluster.standbyCoordinatorPort} (standby; clients are given both)`,
    );
  if (routerBuilt)
    lines.push(`  router:       metrics http://127.0.0.1:${cluster.routerMetricsPort}/metrics`);
  lines.push(`  logs:         ${l.logsDir}`);
  const defaultPlace = l.dir.endsWith('/.tessera') || cluster.coordinatorPort === 7400;
  lines.push(
    `  status:       tessera status${defaultPlace ? '' : ` --coordinator ${coordinatorListOf(cluster)}`}`,
  );
  lines.push(`  stop:         tessera down${downDirArg(l)}`);
  return lines.join('\n') + '\n';
}
