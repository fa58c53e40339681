// The local cluster's supervisor: starts the Postgres nodes and the services of SERVICES as
// child processes, restarts one that dies (with backoff), records what runs in state.json, and
// on stop ends the services and then the nodes. `tessera supervise` runs it detached for `up`.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { APPS_DIR } from '../paths.js';
import {
  localInstances,
  readStateFile,
  writeStateFile,
  type ClusterFile,
  type Layout,
  type ServiceState,
  type StateFile,
} from './layout.js';
import {
  createReplica,
  ensureCatalogDatabase,
  isFenced,
  runningNodePid,
  startNode,
  stopNodes,
} from './postgres-nodes.js';
import { clusterPasswords, type ClusterPasswords } from './passwords.js';
import { childEnv, isSameProcess, killGroup, recordOf, waitForExit } from './processes.js';
import { SERVICES, type ServiceSpec } from './services.js';

export type Log = (message: string) => void;

/** 1 s, 2 s, 4 s ... at most 30 s between restarts; a service that ran a minute starts over at 1 s. */
export function restartDelayMs(restartsInARow: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, restartsInARow - 1));
}
const HEALTHY_RUN_MS = 60_000;
const STOP_GRACE_MS = 10_000;

const serviceEnv = (l: Layout): NodeJS.ProcessEnv => childEnv({ TESSERA_HOME: l.dir });

class ServiceRunner {
  private child: ChildProcess | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private inARow = 0;
  private startedAt = 0;
  restarts = 0;

  constructor(
    readonly spec: ServiceSpec,
    private readonly entryArgs: string[],
    private readonly sup: Supervisor,
  ) {}

  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null
      ? this.child.pid
      : undefined;
  }

  start(): void {
    this.restartTimer = undefined;
    const { layout: l, cluster } = this.sup;
    const out = openSync(l.logFile(this.spec.name), 'a');
    const child = spawn(process.execPath, [...this.entryArgs, ...this.spec.args(cluster, l)], {
      cwd: APPS_DIR,
      env: { ...serviceEnv(l), ...this.spec.env?.(cluster, this.sup.passwords) },
      stdio: ['ignore', out, out],
      // Its own process group, so stopping it reaches whatever it spawned, and a Ctrl-C meant for
      // `up --foreground` reaches only the supervisor, which then stops things in order.
      detached: true,
    });
    closeSync(out);
    this.child = child;
    this.startedAt = Date.now();
    child.once('error', (e) => this.sup.log(`${this.spec.name} could not start: ${e.message}`));
    child.once('exit', (code, signal) => this.onExit(child, code, signal));
    if (child.pid !== undefined) this.sup.log(`${this.spec.name} started (pid ${child.pid})`);
    this.sup.saveState();
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child || this.sup.stopping) return;
    this.inARow = Date.now() - this.startedAt > HEALTHY_RUN_MS ? 1 : this.inARow + 1;
    const delay = restartDelayMs(this.inARow);
    this.sup.log(
      `${this.spec.name} exited (${signal ? `signal ${signal}` : `code ${code}`}); restarting in ${delay / 1000} s ` +
        `(see ${this.sup.layout.logFile(this.spec.name)})`,
    );
    this.restarts++;
    this.restartTimer = setTimeout(() => {
      if (!this.sup.stopping) this.start();
    }, delay);
    this.sup.saveState();
  }

  async stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    const pid = this.pid;
    if (pid === undefined) return;
    killGroup(pid, 'SIGTERM');
    if (!(await waitForExit(pid, STOP_GRACE_MS))) {
      this.sup.log(`${this.spec.name} did not stop within ${STOP_GRACE_MS / 1000} s; killing it`);
      killGroup(pid, 'SIGKILL');
      await waitForExit(pid, 5_000);
    }
    this.sup.log(`${this.spec.name} stopped`);
  }
}

export class Supervisor {
  stopping = false;
  private readonly runners: ServiceRunner[] = [];
  private readonly nodePids = new Map<string, number>();
  private readonly nodeRestarting = new Set<string>();
  private readonly nodeRestarts = new Map<string, number>();
  private watchdog: NodeJS.Timeout | undefined;
  /** Undefined for a trust cluster. Throws CliError when a cluster with passwords lost its file. */
  readonly passwords: ClusterPasswords | undefined;

  constructor(
    readonly layout: Layout,
    readonly cluster: ClusterFile,
    private readonly binDir: string,
    readonly log: Log,
  ) {
    this.passwords = clusterPasswords(layout, cluster);
  }

  /**
   * Starts the nodes' servers, the catalog database, the replicas (made by a base backup the first
   * time), then every service of this build. A former primary its agent fenced stays down.
   */
  async start(): Promise<void> {
    writeFileSync(this.layout.pidFile, `${process.pid}\n`);
    this.endLeftovers();
    const instances = localInstances(this.cluster);
    const startOne = async (dir: string, port: number): Promise<void> => {
      if (isFenced(this.layout, dir)) {
        this.log(
          `${dir} is a fenced former primary: left stopped (tessera nodes rejoin brings it back)`,
        );
        return;
      }
      const adopted = runningNodePid(this.layout, dir);
      const pid = await startNode(this.layout, dir, port, this.binDir);
      this.nodePids.set(dir, pid);
      this.log(
        `node ${dir} ${adopted ? 'already running' : 'started'} on port ${port} (pid ${pid})`,
      );
    };
    await Promise.all(instances.filter((i) => !i.replica).map((i) => startOne(i.dir, i.port)));
    const superuserPassword = this.passwords?.postgres;
    await ensureCatalogDatabase(
      instances.filter((i) => i.node === 'home').map((i) => i.port),
      superuserPassword,
    );
    await Promise.all(
      instances
        .filter((i) => i.replica)
        .map(async (i) => {
          const primaryPort = this.cluster.nodePorts[i.node];
          if (await createReplica(this.layout, i, primaryPort, this.binDir, superuserPassword))
            this.log(`made ${i.dir} a streaming replica of ${i.node} (pg_basebackup -R)`);
          await startOne(i.dir, i.port);
        }),
    );
    let agents = false;
    for (const spec of SERVICES) {
      if (this.stopping) return;
      if (spec.enabled && !spec.enabled(this.cluster)) continue;
      const entry = spec.entry();
      if (!entry) {
        this.log(`${spec.name}: ${spec.absentNote}`);
        continue;
      }
      if (spec.name.startsWith('agent-')) agents = true;
      const runner = new ServiceRunner(spec, entry.args, this);
      this.runners.push(runner);
      runner.start();
    }
    // With agents, they restart standbys and the coordinator decides about primaries (a former
    // primary must stay down): the supervisor restarts servers only when there are no agents.
    if (!agents) this.watchdog = setInterval(() => void this.checkNodes(), 1_000);
    this.saveState();
  }

  /** Services first (they hold connections to the nodes), then a fast shutdown of the nodes. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.watchdog);
    await Promise.all(this.runners.map((r) => r.stop()));
    const stopped = await stopNodes(this.layout);
    if (stopped.length > 0) this.log(`nodes stopped: ${stopped.join(', ')}`);
    rmSync(this.layout.stateFile, { force: true });
    rmSync(this.layout.pidFile, { force: true });
  }

  /** Services the previous supervisor left running (if it was killed): end them before we start ours. */
  private endLeftovers(): void {
    const old = readStateFile(this.layout);
    for (const [name, rec] of Object.entries(old?.services ?? {})) {
      if (rec.pid === process.pid || !isSameProcess(rec)) continue;
      this.log(`ending ${name} (pid ${rec.pid}) left over from an earlier run`);
      killGroup(rec.pid, 'SIGKILL');
    }
  }

  /** A node whose server died is started again, with the same backoff as services. */
  private async checkNodes(): Promise<void> {
    for (const inst of localInstances(this.cluster)) {
      const n = { name: inst.dir, port: inst.port };
      if (this.stopping || this.nodeRestarting.has(n.name)) continue;
      if (runningNodePid(this.layout, n.name) !== undefined) continue;
      this.nodeRestarting.add(n.name);
      const count = (this.nodeRestarts.get(n.name) ?? 0) + 1;
      this.nodeRestarts.set(n.name, count);
      const delay = restartDelayMs(count);
      this.log(`node ${n.name} is not running; starting it again in ${delay / 1000} s`);
      setTimeout(() => {
        if (this.stopping) return this.nodeRestarting.delete(n.name);
        startNode(this.layout, n.name, n.port, this.binDir)
          .then((pid) => {
            this.nodePids.set(n.name, pid);
            this.log(`node ${n.name} started again (pid ${pid})`);
            this.saveState();
          })
          .catch((e: unknown) =>
            this.log(`node ${n.name} did not start: ${e instanceof Error ? e.message : String(e)}`),
          )
          .finally(() => this.nodeRestarting.delete(n.name));
      }, delay);
    }
  }

  saveState(): void {
    if (this.stopping) return;
    const nodes: StateFile['nodes'] = {};
    for (const i of localInstances(this.cluster)) {
      const pid = this.nodePids.get(i.dir);
      if (pid !== undefined && runningNodePid(this.layout, i.dir) === pid)
        nodes[i.dir] = { ...recordOf(pid), port: i.port };
    }
    const services: Record<string, ServiceState> = {};
    for (const r of this.runners) {
      const pid = r.pid;
      if (pid === undefined) continue;
      services[r.spec.name] = {
        ...recordOf(pid),
        restarts: r.restarts,
        ports: r.spec.ports(this.cluster),
      };
    }
    writeStateFile(this.layout, { supervisor: recordOf(process.pid), nodes, services });
  }
}
