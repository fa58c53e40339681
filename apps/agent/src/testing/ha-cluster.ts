// Test helpers (not exported from index.ts): a small real cluster for failover tests. A plain
// Postgres holds the catalog (and is the home node), data node d1 is a primary with a streaming
// replica, real coordinators run in this process, and an agent watches each of d1's instances
// (in this process, or as a real `tessera-agent` process when the test must freeze it). The write
// load the tests put on it is in writers.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  startCoordinator,
  type CoordinatorConfig,
  type RunningCoordinator,
} from '@tessera/coordinator';
import {
  AdminService,
  AgentService,
  CatalogService,
  NodeRole,
  ReplicaState,
  createClient,
  type Catalog,
  type Client,
  type Node,
} from '@tessera/proto';
import { createLogger } from '@tessera/telemetry';
import {
  startPostgres,
  startReplicatedPostgres,
  type PgServer,
  type StandbyServer,
} from '@tessera/testkit';
import { startAgent, type RunningAgent } from '../agent.js';
import { parseConfig, type AgentConfig } from '../config.js';
import { agentArgv } from '../launch.js';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

export const quiet = () =>
  createLogger('test', { level: process.env['TESSERA_TEST_LOG_LEVEL'] ?? 'silent' });

export interface AgentHandle {
  address: string;
  /** In-process agents only. */
  agent?: RunningAgent;
  /** Process agents only. */
  child?: ChildProcess;
  stop(): Promise<void>;
}

export interface HaCluster {
  catalogServer: PgServer;
  coordinators: CoordinatorHandle[];
  coordinatorList(): string;
  servers: Map<string, PgServer>;
  agents: Map<string, AgentHandle>;
  admin: Client<typeof AdminService>;
  catalog: Client<typeof CatalogService>;
  health: Client<typeof AgentService>;
  node(name?: string): Promise<Node>;
  /** The server that is d1's primary now, per the catalog. */
  primary(name?: string): Promise<PgServer>;
  waitNode(
    pred: (n: Node) => boolean,
    timeoutMs: number,
    what: string,
    name?: string,
  ): Promise<Node>;
  startAgent(address: string, opts?: { process?: boolean; extra?: string[] }): Promise<AgentHandle>;
  startCoordinator(): Promise<CoordinatorHandle>;
  /** Which node an instance address belongs to. */
  nodeOf: Map<string, string>;
  dispose(): Promise<void>;
}

export interface HaOptions {
  durability?: 'required' | 'preferred';
  leaseMs?: number;
  leaseMarginMs?: number;
  coordinators?: number;
  /** Agents as processes (so they can be frozen or killed), not in this process. */
  processAgents?: boolean;
  /** Coordinators as processes (so one can be SIGKILLed). */
  processCoordinators?: boolean;
  /** The home node (which holds the catalog) has a synchronous replica too, with agents. */
  homeReplica?: boolean;
  /** standbyPollMs of the i-th coordinator started (default 200 each). */
  coordinatorPollMs?: readonly number[];
  /** The coordinators' --report-fresh-ms (their default when absent). */
  reportFreshMs?: number;
}

/** A coordinator: in this process, or a real `tessera-coordinator` process. */
export interface CoordinatorHandle {
  address: string;
  child?: ChildProcess;
  inProcess?: RunningCoordinator;
  /** Lines it logged (process coordinators). */
  lines: string[];
  kill(): void;
  stop(): Promise<void>;
}

const COORDINATOR_MAIN = fileURLToPath(
  new URL('../../../coordinator/src/main.ts', import.meta.url),
);

export const addr = (s: { host: string; port: number }): string => `${s.host}:${s.port}`;

export async function startHaCluster(opts: HaOptions = {}): Promise<HaCluster> {
  const servers = new Map<string, PgServer>();
  const nodeOf = new Map<string, string>();
  let catalogServer: PgServer;
  let homeReplica: StandbyServer | undefined;
  if (opts.homeReplica) {
    const home = await startReplicatedPostgres({ name: 'home', synchronous: false });
    catalogServer = home.primary;
    homeReplica = home.replicas[0]!;
    servers.set(addr(home.primary), home.primary);
    servers.set(addr(homeReplica), homeReplica);
    nodeOf.set(addr(home.primary), 'home');
    nodeOf.set(addr(homeReplica), 'home');
  } else catalogServer = await startPostgres({ name: 'catalog' });
  await catalogServer.query('create database tessera');
  const rp = await startReplicatedPostgres({ name: 'd1', synchronous: false });
  const [replica] = rp.replicas;
  if (!replica) throw new Error('no replica');
  for (const s of [rp.primary, replica]) {
    servers.set(addr(s), s);
    nodeOf.set(addr(s), 'd1');
  }
  const coordinators: CoordinatorHandle[] = [];
  const agents = new Map<string, AgentHandle>();
  const catalogUrl = homeReplica
    ? `postgresql://postgres@${addr(catalogServer)},${addr(homeReplica)}/tessera`
    : catalogServer.url('tessera');
  const config = (): CoordinatorConfig => ({
    catalogUrl,
    listen: '127.0.0.1:0',
    metricsPort: 0,
    standbyPollMs: opts.coordinatorPollMs?.[coordinators.length] ?? 200,
    recoveryGraceMs: 5_000,
    leaseMs: opts.leaseMs ?? 3_000,
    leaseMarginMs: opts.leaseMarginMs ?? 500,
    durability: opts.durability ?? 'preferred',
    reportFreshMs: opts.reportFreshMs,
  });
  const startOne = async (): Promise<CoordinatorHandle> => {
    let h: CoordinatorHandle;
    if (opts.processCoordinators) {
      const c = config();
      const child = spawn(
        process.execPath,
        [
          '--conditions=development',
          '--import',
          'tsx',
          COORDINATOR_MAIN,
          '--catalog-url',
          c.catalogUrl,
          '--listen',
          c.listen,
          '--metrics-port',
          '0',
          '--standby-poll-ms',
          String(c.standbyPollMs),
          '--lease-ms',
          String(c.leaseMs),
          '--lease-margin-ms',
          String(c.leaseMarginMs),
          '--durability',
          c.durability ?? 'preferred',
          ...(c.reportFreshMs === undefined ? [] : ['--report-fresh-ms', String(c.reportFreshMs)]),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] } },
      );
      const lines: string[] = [];
      const listening = new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (l) => {
          lines.push(l);
          if (process.env['TESSERA_TEST_LOG_LEVEL']) process.stdout.write(`coordinator: ${l}\n`);
          try {
            const e = JSON.parse(l) as Record<string, unknown>;
            if (e['msg'] === 'coordinator listening; taking the leader lock')
              resolve(String(e['listen']));
          } catch {
            // not JSON: shows in the assertion that every line is
          }
        });
        child.once('exit', (code) => reject(new Error(`the coordinator exited (${code})`)));
      });
      child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      h = {
        address: await listening,
        child,
        lines,
        kill: () => child.kill('SIGKILL'),
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      };
    } else {
      const c = await startCoordinator(config(), { log: quiet() });
      h = {
        address: c.address,
        inProcess: c,
        lines: [],
        kill: () => {
          throw new Error('an in-process coordinator cannot be killed');
        },
        stop: () => c.stop(),
      };
    }
    coordinators.push(h);
    return h;
  };
  const first = await startOne();
  await first.inProcess?.whenActive;
  for (let i = 1; i < (opts.coordinators ?? 1); i++) await startOne();
  const coordinatorList = () => coordinators.map((c) => c.address).join(',');
  const admin = createClient(AdminService, coordinatorList(), { deadlineMs: 60_000 });
  const catalog = createClient(CatalogService, coordinatorList(), { deadlineMs: 10_000 });
  const health = createClient(AgentService, coordinatorList(), { deadlineMs: 10_000 });
  for (let i = 0; ; i++) {
    try {
      await catalog.getCatalog({});
      break;
    } catch (e) {
      if (i > 200) throw e;
      await sleep(100);
    }
  }
  await admin.addNode({
    name: 'home',
    host: catalogServer.host,
    port: catalogServer.port,
    role: NodeRole.HOME,
    ...(homeReplica
      ? {
          replicaHost: homeReplica.host,
          replicaPort: homeReplica.port,
          replicaName: homeReplica.applicationName,
        }
      : {}),
  });
  await admin.addNode({
    name: 'd1',
    host: rp.primary.host,
    port: rp.primary.port,
    role: NodeRole.DATA,
    replicaHost: replica.host,
    replicaPort: replica.port,
    replicaName: replica.applicationName,
  });

  const agentArgs = (server: PgServer, address: string, extra: string[]): string[] =>
    agentArgv({
      coordinators: coordinatorList().split(','),
      node: nodeOf.get(address)!,
      pgUrl: server.url(),
      address,
      dataDir: server.dataDir,
      probeIntervalMs: 200,
      reportIntervalMs: 500,
      extra,
    });
  const agentConfig = (address: string, extra: string[]): AgentConfig => {
    const parsed = parseConfig(agentArgs(servers.get(address)!, address, extra), {});
    if (parsed.help) throw new Error('unreachable');
    return parsed.config;
  };
  const startAgentAt = async (
    address: string,
    o: { process?: boolean; extra?: string[] } = {},
  ): Promise<AgentHandle> => {
    const server = servers.get(address);
    if (!server) throw new Error(`no server at ${address}`);
    let handle: AgentHandle;
    if (o.process ?? opts.processAgents ?? false) {
      const child = spawn(
        process.execPath,
        [
          '--conditions=development',
          '--import',
          'tsx',
          MAIN,
          ...agentArgs(server, address, o.extra ?? []),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TESSERA_LOG_LEVEL: 'info' } },
      );
      createInterface({ input: child.stdout! }).on('line', (l) => {
        if (process.env['TESSERA_TEST_LOG_LEVEL']) process.stdout.write(`agent ${address}: ${l}\n`);
      });
      child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      handle = {
        address,
        child,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGCONT');
            child.kill('SIGKILL');
          }
          await exited;
        },
      };
    } else {
      const agent = await startAgent(agentConfig(address, o.extra ?? []), { log: quiet() });
      handle = { address, agent, stop: () => agent.stop() };
    }
    agents.set(address, handle);
    return handle;
  };
  for (const a of servers.keys()) await startAgentAt(a);
  const node = async (name = 'd1'): Promise<Node> => {
    const c: Catalog = await catalog.getCatalog({});
    const n = c.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  };
  const waitNode: HaCluster['waitNode'] = async (pred, timeoutMs, what, name = 'd1') => {
    const deadline = performance.now() + timeoutMs;
    let last: Node | undefined;
    for (;;) {
      try {
        last = await node(name);
        if (pred(last)) return last;
      } catch {
        // a coordinator between terms
      }
      if (performance.now() > deadline)
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; node: ${JSON.stringify(last, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`,
        );
      await sleep(50);
    }
  };
  const cluster: HaCluster = {
    catalogServer,
    coordinators,
    coordinatorList,
    servers,
    agents,
    admin,
    catalog,
    health,
    node,
    primary: async (name = 'd1') => {
      const n = await node(name);
      const s = servers.get(addr(n));
      if (!s) throw new Error(`no server at ${addr(n)}`);
      return s;
    },
    waitNode,
    startAgent: startAgentAt,
    startCoordinator: startOne,
    nodeOf,
    dispose: async () => {
      admin.close();
      catalog.close();
      health.close();
      for (const a of agents.values()) await a.stop().catch(() => undefined);
      for (const c of coordinators) await c.stop().catch(() => undefined);
      for (const s of servers.values()) await s.dispose().catch(() => undefined);
      await catalogServer.dispose().catch(() => undefined);
    },
  };
  return cluster;
}

/** The node's replica in the durable sync set, once it is there. */
export const hasSyncReplica = (n: Node): boolean =>
  n.replicas.some((r) => r.state === ReplicaState.SYNC);
