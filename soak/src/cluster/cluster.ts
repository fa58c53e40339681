// The soak cluster, started by the harness itself: a home node and data nodes (real Postgres),
// coordinators and routers (their published bins as processes), each in a network namespace of
// its own when the machine allows (docs/soak.md, "Network"), else on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '@tessera/pgctl';
import {
  AdminService,
  CatalogService,
  JobService,
  createClient,
  type Catalog,
  type Client,
} from '@tessera/proto';
import { serviceBin } from '../entry.js';
import { Network, netnsSupport, sweepStaleNamespaces } from '../net/netns.js';
import { pickSubnet, planTopology, type MemberSpec, type Topology } from '../net/topology.js';
import type { ClusterPlan } from '../plan/plan.js';
import { NodeMember, type Address } from './nodes.js';
import { ManagedProcess } from './process.js';
import { CoordinatorVip } from './vip.js';

export type NetworkUse = 'netns' | 'loopback';

export const COORDINATOR_PORT = 7400;
export const ROUTER_PORT = 6432;
export const CATALOG_DATABASE = 'tessera';
export const SOAK_DATABASE = 'soak';
/** What a mover logs once it claims jobs. */
const MOVER_READY = 'mover started';

export interface ServiceMember {
  name: string;
  kind: 'coordinator' | 'router' | 'mover';
  address: Address;
  process: ManagedProcess;
}

export interface ClusterEvents {
  log(line: string): void;
  /** Something the history should record (leader changes, unexpected exits). */
  note(f: string, value: Record<string, unknown>): void;
}

export class Cluster {
  readonly nodes: NodeMember[] = [];
  readonly coordinators: ServiceMember[] = [];
  readonly routers: ServiceMember[] = [];
  /** Movers (no address of their own that anyone dials: they only call out). */
  readonly movers: ServiceMember[] = [];
  readonly token = randomBytes(16).toString('hex');
  vip!: CoordinatorVip;
  vipAddress!: Address;
  network: Network | undefined;
  topology: Topology | undefined;
  #admin: Client<typeof AdminService> | undefined;
  #catalog: Client<typeof CatalogService> | undefined;
  #jobs: Client<typeof JobService> | undefined;
  #stopping = false;
  /** Services that exited without being asked to, with when. */
  readonly unexpectedExits: {
    name: string;
    atMs: number;
    code: number | null;
    signal: string | null;
  }[] = [];

  private constructor(
    readonly plan: ClusterPlan,
    readonly runDir: string,
    readonly use: NetworkUse,
    /** Why this network mode (shown in the report). */
    readonly useReason: string,
    readonly events: ClusterEvents,
  ) {}

  /** Decides netns or loopback for a plan: what it asks for, what the machine can do. */
  static networkFor(plan: ClusterPlan): { use: NetworkUse; reason: string } {
    if (plan.network === 'loopback')
      return { use: 'loopback', reason: 'the plan asks for loopback' };
    const s = netnsSupport();
    if (s.ok) return { use: 'netns', reason: 'each instance in its own network namespace' };
    if (plan.network === 'netns')
      throw new Error(`the plan needs network namespaces, but ${s.reason}`);
    return {
      use: 'loopback',
      reason: `${s.reason}: running on 127.0.0.1, without partition faults`,
    };
  }

  static async start(plan: ClusterPlan, runDir: string, events: ClusterEvents): Promise<Cluster> {
    const { use, reason } = Cluster.networkFor(plan);
    mkdirSync(join(runDir, 'logs'), { recursive: true });
    const c = new Cluster(plan, runDir, use, reason, events);
    events.log(`network: ${use} (${reason})`);
    try {
      await c.#start();
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  /** Member names: home, data1..N, coord0..M-1, router0..R-1. */
  static memberSpecs(plan: ClusterPlan): MemberSpec[] {
    return [
      { name: 'home', kind: 'node' },
      ...Array.from({ length: plan.dataNodes }, (_, i) => ({
        name: `data${i + 1}`,
        kind: 'node' as const,
      })),
      ...Array.from({ length: plan.coordinators }, (_, i) => ({
        name: `coord${i}`,
        kind: 'coordinator' as const,
      })),
      ...Array.from({ length: plan.routers }, (_, i) => ({
        name: `router${i}`,
        kind: 'router' as const,
      })),
      ...Array.from({ length: plan.movers }, (_, i) => ({
        name: `mover${i}`,
        kind: 'mover' as const,
      })),
    ];
  }

  async #start(): Promise<void> {
    const specs = Cluster.memberSpecs(this.plan);
    if (this.use === 'netns') {
      const live = sweepStaleNamespaces();
      this.topology = planTopology(specs, pickSubnet(process.pid, live), process.pid);
      this.network = new Network(this.topology);
      await this.network.up();
      this.events.log(
        `network namespaces up: ${this.topology.members.map((m) => `${m.name} ${m.address}`).join(', ')}; harness ${this.topology.rootAddress}`,
      );
    }
    const memberOf = (name: string) => this.topology?.members.find((m) => m.name === name);

    // Postgres nodes, in parallel.
    const nodeSpecs = specs.filter((s) => s.kind === 'node');
    const started = await Promise.all(
      nodeSpecs.map((s) =>
        NodeMember.start({
          name: s.name,
          role: s.name === 'home' ? 'home' : 'data',
          address: memberOf(s.name)?.address,
          ns: memberOf(s.name)?.ns,
          linkProxy: this.plan.linkProxy,
          settings: this.plan.postgresSettings,
          runDir: this.runDir,
        }),
      ),
    );
    this.nodes.push(...started);
    for (const n of this.nodes) {
      await n.pg.query(`create database ${SOAK_DATABASE}`);
      if (n.role === 'home') await n.pg.query(`create database ${CATALOG_DATABASE}`);
    }
    this.events.log(
      `postgres: ${this.nodes.map((n) => `${n.name} ${n.direct.host}:${n.direct.port}${n.proxy ? ` (catalog ${n.catalogAddress.host}:${n.catalogAddress.port})` : ''}`).join(', ')}`,
    );

    // Coordinators behind the harness's VIP, which they advertise: a standby names the active
    // coordinator's advertised address to a client that reached it, and routers can reach only
    // the VIP (they have no link to a coordinator's own address).
    const vipHost = this.topology?.rootAddress ?? '127.0.0.1';
    const vipPort = this.topology ? COORDINATOR_PORT : await freePort();
    const home = this.home;
    const catalogUrl = `postgresql://postgres@${home.catalogAddress.host}:${home.catalogAddress.port}/${CATALOG_DATABASE}`;
    for (const s of specs.filter((x) => x.kind === 'coordinator')) {
      const m = memberOf(s.name);
      const address = {
        host: m?.address ?? '127.0.0.1',
        port: m ? COORDINATOR_PORT : await freePort(),
      };
      const proc = new ManagedProcess({
        name: s.name,
        command: process.execPath,
        args: [
          serviceBin('coordinator', 'tessera-coordinator'),
          ...['--catalog-url', catalogUrl, '--listen', `${address.host}:${address.port}`],
          ...['--metrics-port', '0', '--standby-poll-ms', '200'],
          ...['--advertise', `${vipHost}:${vipPort}`],
          ...this.plan.coordinatorArgs,
        ],
        env: { TESSERA_ADMIN_TOKEN: this.token, TESSERA_LOG_LEVEL: 'info' },
        ns: m?.ns,
        logFile: join(this.runDir, 'logs', `${s.name}.log`),
      });
      this.coordinators.push({ name: s.name, kind: 'coordinator', address, process: proc });
    }
    this.vip = new CoordinatorVip(
      this.coordinators.map((c) => ({ name: c.name, ...c.address })),
      this.token,
      (leader) => this.events.note('coordinator-leader', { leader: leader ?? null }),
    );
    await this.vip.listen(vipHost, vipPort);
    this.vipAddress = { host: vipHost, port: vipPort };
    for (const c of this.coordinators) {
      this.#supervise(c);
      c.process.start();
    }
    await Promise.all(
      this.coordinators.map((c) => c.process.waitForLog('coordinator listening', 180_000)),
    );
    const leader = await this.vip.waitForLeader(120_000);
    this.events.log(
      `coordinators: ${this.coordinators.map((c) => `${c.name} ${c.address.host}:${c.address.port}`).join(', ')}; active ${leader}; routers reach them at ${vipHost}:${vipPort}`,
    );

    // Routers.
    for (const s of specs.filter((x) => x.kind === 'router')) {
      const m = memberOf(s.name);
      const address = { host: m?.address ?? '127.0.0.1', port: m ? ROUTER_PORT : await freePort() };
      const proc = new ManagedProcess({
        name: s.name,
        command: process.execPath,
        args: [
          serviceBin('router', 'tessera-router'),
          ...[
            '--listen',
            `${address.host}:${address.port}`,
            '--coordinator',
            `${vipHost}:${vipPort}`,
          ],
          ...['--metrics-port', '0', '--router-id', s.name],
          ...this.plan.routerArgs,
        ],
        env: { TESSERA_ADMIN_TOKEN: this.token, TESSERA_LOG_LEVEL: 'info' },
        ns: m?.ns,
        logFile: join(this.runDir, 'logs', `${s.name}.log`),
      });
      this.routers.push({ name: s.name, kind: 'router', address, process: proc });
    }

    // Movers: they claim the jobs the move faults submit, and reach the nodes at their catalog
    // addresses (each node links to every member) and the coordinators through the VIP. The
    // mover id is fixed, so a mover restarted after a kill resumes its jobs at once.
    for (const s of specs.filter((x) => x.kind === 'mover')) {
      const m = memberOf(s.name);
      const proc = new ManagedProcess({
        name: s.name,
        command: process.execPath,
        args: [
          serviceBin('mover', 'tessera-mover'),
          ...['--coordinator', `${vipHost}:${vipPort}`, '--metrics-port', '0'],
          ...['--mover-id', `soak-${s.name}`],
          // Marker round trips of 20 ms three times in a row are rare on a loaded 2-core machine.
          ...['--catchup-budget-ms', '100'],
          ...this.plan.moverArgs,
        ],
        env: { TESSERA_ADMIN_TOKEN: this.token, TESSERA_LOG_LEVEL: 'info' },
        ns: m?.ns,
        logFile: join(this.runDir, 'logs', `${s.name}.log`),
      });
      const mover: ServiceMember = {
        name: s.name,
        kind: 'mover',
        address: { host: m?.address ?? '127.0.0.1', port: 0 },
        process: proc,
      };
      this.movers.push(mover);
      this.#supervise(mover);
      proc.start();
    }
    await Promise.all(this.movers.map((mv) => mv.process.waitForLog(MOVER_READY, 180_000)));
  }

  get home(): NodeMember {
    return this.nodes.find((n) => n.role === 'home')!;
  }

  get dataNodes(): NodeMember[] {
    return this.nodes.filter((n) => n.role === 'data');
  }

  node(name: string): NodeMember {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  router(name: string): ServiceMember {
    const r = this.routers.find((x) => x.name === name);
    if (!r) throw new Error(`no router ${name}`);
    return r;
  }

  mover(name: string): ServiceMember {
    const m = this.movers.find((x) => x.name === name);
    if (!m) throw new Error(`no mover ${name}`);
    return m;
  }

  get jobs(): Client<typeof JobService> {
    this.#jobs ??= createClient(JobService, `${this.vipAddress.host}:${this.vipAddress.port}`, {
      token: this.token,
      deadlineMs: 10_000,
      channel: this.admin.grpcClient,
    });
    return this.#jobs;
  }

  coordinator(name: string): ServiceMember {
    const c = this.coordinators.find((x) => x.name === name);
    if (!c) throw new Error(`no coordinator ${name}`);
    return c;
  }

  get admin(): Client<typeof AdminService> {
    this.#admin ??= createClient(AdminService, `${this.vipAddress.host}:${this.vipAddress.port}`, {
      token: this.token,
      deadlineMs: 15_000,
    });
    return this.#admin;
  }

  get catalogClient(): Client<typeof CatalogService> {
    this.#catalog ??= createClient(
      CatalogService,
      `${this.vipAddress.host}:${this.vipAddress.port}`,
      {
        token: this.token,
        deadlineMs: 5_000,
        channel: this.admin.grpcClient,
      },
    );
    return this.#catalog;
  }

  async getCatalog(): Promise<Catalog> {
    return this.catalogClient.getCatalog({});
  }

  /** Starts the routers (once the catalog has nodes and tables) and waits for their catalogs. */
  async startRouters(): Promise<void> {
    for (const r of this.routers) {
      this.#supervise(r);
      r.process.start();
    }
    await Promise.all(this.routers.map((r) => this.waitForRouter(r, 180_000)));
  }

  /** Resolves once a (re)started router routes by a catalog. */
  async waitForRouter(r: ServiceMember, timeoutMs = 180_000): Promise<void> {
    await r.process.waitForLog('catalog swapped in', timeoutMs);
  }

  /** Starts a service that is down; either way resolves once it serves. */
  async restartService(s: ServiceMember): Promise<void> {
    if (!s.process.running) s.process.start();
    if (s.kind === 'router') await this.waitForRouter(s);
    else if (s.kind === 'mover') await s.process.waitForLog(MOVER_READY, 180_000);
    else await s.process.waitForLog('coordinator listening', 180_000);
  }

  /** A connection to a node itself (not through the proxy or a router). */
  async nodeClient(
    n: NodeMember,
    database = SOAK_DATABASE,
    timeoutMs = 10_000,
  ): Promise<pg.Client> {
    const c = new pg.Client({
      host: n.direct.host,
      port: n.direct.port,
      user: 'postgres',
      database,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs * 3,
    });
    c.on('error', () => {});
    await c.connect();
    return c;
  }

  async routerClient(r: ServiceMember, timeoutMs = 10_000): Promise<pg.Client> {
    const c = new pg.Client({
      host: r.address.host,
      port: r.address.port,
      user: 'postgres',
      database: SOAK_DATABASE,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs * 3,
    });
    c.on('error', () => {});
    await c.connect();
    return c;
  }

  /** Restarts a service that died on its own (after a second), and says so in the history. */
  #supervise(s: ServiceMember): void {
    s.process.onUnexpectedExit = (code, signal) => {
      if (this.#stopping) return;
      this.unexpectedExits.push({ name: s.name, atMs: Date.now(), code, signal });
      this.events.note('unexpected-exit', { target: s.name, code, signal });
      this.events.log(
        `${s.name} exited on its own (code ${code}, signal ${signal}); restarting it`,
      );
      setTimeout(() => {
        if (!this.#stopping && !s.process.running)
          void this.restartService(s).catch(() => undefined);
      }, 1_000);
    };
  }

  /** Pids of every service, by name, for RSS sampling (a node: its postmaster and children). */
  servicePids(): { name: string; kind: string; pids: number[] }[] {
    return [
      ...this.nodes.map((n) => ({ name: n.name, kind: 'postgres', pids: n.pids() })),
      ...this.coordinators.map((c) => ({
        name: c.name,
        kind: 'coordinator',
        pids: c.process.pid ? [c.process.pid] : [],
      })),
      ...this.routers.map((r) => ({
        name: r.name,
        kind: 'router',
        pids: r.process.pid ? [r.process.pid] : [],
      })),
      ...this.movers.map((m) => ({
        name: m.name,
        kind: 'mover',
        pids: m.process.pid ? [m.process.pid] : [],
      })),
    ];
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#admin?.close();
    for (const r of [...this.movers, ...this.routers]) {
      await r.process.signal('SIGCONT');
      await r.process.stop(5_000);
      r.process.close();
    }
    for (const c of this.coordinators) {
      await c.process.signal('SIGCONT');
      await c.process.stop(5_000);
      c.process.close();
    }
    await this.vip?.close();
    await Promise.all(this.nodes.map((n) => n.stop().catch(() => undefined)));
    this.network?.downSync();
  }
}
