// The soak cluster, started by the harness itself: a home node and data nodes (real Postgres),
// coordinators and routers (their published bins as processes), each in a network namespace of
// its own when the machine allows (docs/soak.md, "Network"), else on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { freePort } from '@tessera/pgctl';
import type { AdminService, CatalogService, JobService, Catalog, Client } from '@tessera/proto';
import { Network, sweepStaleNamespaces } from '../net/netns.js';
import { pickSubnet, planTopology, type Topology } from '../net/topology.js';
import type { ClusterPlan } from '../plan/plan.js';
import { AGENT_READY, agentProcess } from './agents.js';
import { CoordinatorClients, connectTo } from './clients.js';
import { PgInstance, type Address } from './instance.js';
import { memberSpecs, networkFor, nodeNames, type NetworkUse } from './layout.js';
import { NodeMember, replicaMember } from './nodes.js';
import type { ManagedProcess } from './process.js';
import {
  COORDINATOR_PORT,
  MOVER_READY,
  ROUTER_PORT,
  coordinatorService,
  moverService,
  routerService,
  type ServiceMember,
  type ServicePlacement,
} from './services.js';
import { CoordinatorVip } from './vip.js';

export { COORDINATOR_PORT, ROUTER_PORT, type ServiceMember } from './services.js';
export type { NetworkUse } from './layout.js';

export const CATALOG_DATABASE = 'tessera';
export const SOAK_DATABASE = 'soak';

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
  readonly #clients = new CoordinatorClients(() => this.vipAddress, this.token);
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

  static async start(plan: ClusterPlan, runDir: string, events: ClusterEvents): Promise<Cluster> {
    const { use, reason } = networkFor(plan.network);
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

  #memberOf(name: string) {
    return this.topology?.members.find((m) => m.name === name);
  }

  /** A service's address: its namespace's, or 127.0.0.1 with a free port. */
  async #placement(name: string, port: number): Promise<ServicePlacement> {
    const m = this.#memberOf(name);
    return {
      name,
      address: { host: m?.address ?? '127.0.0.1', port: m ? port : await freePort() },
      ns: m?.ns,
      vip: this.vipAddress,
      token: this.token,
      runDir: this.runDir,
      plan: this.plan,
    };
  }

  async #start(): Promise<void> {
    const specs = memberSpecs(this.plan);
    if (this.use === 'netns') {
      const live = sweepStaleNamespaces();
      this.topology = planTopology(specs, pickSubnet(process.pid, live), process.pid);
      this.network = new Network(this.topology);
      await this.network.up();
      this.events.log(
        `network namespaces up: ${this.topology.members.map((m) => `${m.name} ${m.address}`).join(', ')}; harness ${this.topology.rootAddress}`,
      );
    }
    await this.#startNodes();
    this.vipAddress = {
      host: this.topology?.rootAddress ?? '127.0.0.1',
      port: this.topology ? COORDINATOR_PORT : await freePort(),
    };

    // Coordinators behind the harness's VIP. The catalog URL names every server of the home
    // node, so that a coordinator follows the catalog database to a promoted home replica.
    const catalogUrl = `postgresql://postgres@${this.home.instances.map((i) => i.catalogKey).join(',')}/${CATALOG_DATABASE}`;
    for (const s of specs.filter((x) => x.kind === 'coordinator'))
      this.coordinators.push(
        coordinatorService(await this.#placement(s.name, COORDINATOR_PORT), catalogUrl),
      );
    this.vip = new CoordinatorVip(
      this.coordinators.map((c) => ({ name: c.name, ...c.address })),
      this.token,
      (leader) => this.events.note('coordinator-leader', { leader: leader ?? null }),
    );
    await this.vip.listen(this.vipAddress.host, this.vipAddress.port);
    for (const c of this.coordinators) {
      this.#supervise(c);
      c.process.start();
    }
    await Promise.all(
      this.coordinators.map((c) => c.process.waitForLog('coordinator listening', 180_000)),
    );
    const leader = await this.vip.waitForLeader(120_000);
    this.events.log(
      `coordinators: ${this.coordinators.map((c) => `${c.name} ${c.address.host}:${c.address.port}`).join(', ')}; active ${leader}; routers reach them at ${this.vipAddress.host}:${this.vipAddress.port}`,
    );

    for (const s of specs.filter((x) => x.kind === 'router'))
      this.routers.push(routerService(await this.#placement(s.name, ROUTER_PORT)));
    for (const s of specs.filter((x) => x.kind === 'mover')) {
      const mover = moverService(await this.#placement(s.name, 0));
      this.movers.push(mover);
      this.#supervise(mover);
      mover.process.start();
    }
    await Promise.all(this.movers.map((mv) => mv.process.waitForLog(MOVER_READY, 180_000)));
  }

  /** Every node's primary (in parallel), then its replica if the plan asks for one. */
  async #startNodes(): Promise<void> {
    const replicated = this.plan.replicas > 0;
    const options = (node: string, member: string) => ({
      node,
      member,
      address: this.#memberOf(member)?.address,
      ns: this.#memberOf(member)?.ns,
      linkProxy: this.plan.linkProxy,
      replicated,
      settings: this.plan.postgresSettings,
      runDir: this.runDir,
    });
    const started = await Promise.all(
      nodeNames(this.plan).map(async (name) => {
        const instances = [await PgInstance.startPrimary(options(name, name))];
        // Pushed as they start, so that stop() disposes of them should a later one fail.
        const n = new NodeMember(name, name === 'home' ? 'home' : 'data', instances);
        this.nodes.push(n);
        await n.pg.query(`create database ${SOAK_DATABASE}`);
        if (n.role === 'home') await n.pg.query(`create database ${CATALOG_DATABASE}`);
        if (replicated)
          instances.push(
            await PgInstance.startReplica(options(name, replicaMember(name)), instances[0]!),
          );
        return n;
      }),
    );
    this.nodes.sort((a, b) => started.indexOf(a) - started.indexOf(b));
    const describe = (i: PgInstance) =>
      `${i.member} ${i.direct.host}:${i.direct.port}${i.proxy ? ` (catalog ${i.catalogKey})` : ''}`;
    this.events.log(
      `postgres: ${this.instances.map(describe).join(', ')}${replicated ? '; each node with a streaming replica' : ''}`,
    );
  }

  /** Every Postgres instance, primaries and replicas. */
  get instances(): PgInstance[] {
    return this.nodes.flatMap((n) => n.instances);
  }

  /**
   * Starts an agent for every instance of a replicated cluster (once the catalog has its nodes),
   * and waits until each runs.
   */
  async startAgents(): Promise<void> {
    if (this.plan.replicas === 0) return;
    for (const i of this.instances) {
      const agent = agentProcess(i, {
        vip: this.vipAddress,
        token: this.token,
        runDir: this.runDir,
        ns: this.#memberOf(i.member)?.ns,
      });
      i.agent = agent;
      this.#superviseProcess(agent.spec.name, agent);
      agent.start();
    }
    await Promise.all(this.instances.map((i) => i.agent!.waitForLog(AGENT_READY, 180_000)));
  }

  /**
   * Takes each node's primary from the catalog (after a failover, the promoted instance), and
   * says so in the history when it changed.
   */
  followCatalog(c: Catalog): void {
    for (const n of c.nodes) {
      const member = this.nodes.find((x) => x.name === n.name);
      if (member?.follow(n)) {
        this.events.note('primary-changed', { node: n.name, primary: member.primary.member });
        this.events.log(`${n.name}'s primary is ${member.primary.member} now (the catalog's)`);
      }
    }
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

  coordinator(name: string): ServiceMember {
    const c = this.coordinators.find((x) => x.name === name);
    if (!c) throw new Error(`no coordinator ${name}`);
    return c;
  }

  get jobs(): Client<typeof JobService> {
    return this.#clients.jobs;
  }

  get admin(): Client<typeof AdminService> {
    return this.#clients.admin;
  }

  get catalogClient(): Client<typeof CatalogService> {
    return this.#clients.catalog;
  }

  async getCatalog(): Promise<Catalog> {
    return this.#clients.catalog.getCatalog({});
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

  /** A connection to a node's primary itself (not through the proxy or a router). */
  nodeClient(n: NodeMember, database = SOAK_DATABASE, timeoutMs = 10_000): Promise<pg.Client> {
    return connectTo(n.direct, database, timeoutMs);
  }

  routerClient(r: ServiceMember, timeoutMs = 10_000): Promise<pg.Client> {
    return connectTo(r.address, SOAK_DATABASE, timeoutMs);
  }

  /** Restarts a service that died on its own (after a second), and says so in the history. */
  #supervise(s: ServiceMember): void {
    this.#superviseProcess(s.name, s.process, () => this.restartService(s));
  }

  #superviseProcess(
    name: string,
    p: ManagedProcess,
    restart: () => Promise<unknown> = async () => p.start(),
  ): void {
    p.onUnexpectedExit = (code, signal) => {
      if (this.#stopping) return;
      this.unexpectedExits.push({ name, atMs: Date.now(), code, signal });
      this.events.note('unexpected-exit', { target: name, code, signal });
      this.events.log(`${name} exited on its own (code ${code}, signal ${signal}); restarting it`);
      setTimeout(() => {
        if (!this.#stopping && !p.running) void restart().catch(() => undefined);
      }, 1_000);
    };
  }

  /** Pids of every service, by name, for RSS sampling (an instance: its postmaster and children). */
  servicePids(): { name: string; kind: string; pids: number[] }[] {
    const one = (name: string, kind: string, p: ManagedProcess | undefined) => ({
      name,
      kind,
      pids: p?.pid ? [p.pid] : [],
    });
    return [
      ...this.instances.map((i) => ({ name: i.member, kind: 'postgres', pids: i.pids() })),
      ...this.instances.flatMap((i) => (i.agent ? [one(i.agent.spec.name, 'agent', i.agent)] : [])),
      ...this.coordinators.map((c) => one(c.name, 'coordinator', c.process)),
      ...this.routers.map((r) => one(r.name, 'router', r.process)),
      ...this.movers.map((m) => one(m.name, 'mover', m.process)),
    ];
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#clients.close();
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
