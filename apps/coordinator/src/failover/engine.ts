// The failover engine: on every agent report and every tick, for each node, it decides (pure
// deciders: decide.ts, sync-plan.ts, follow.ts) and carries out at most one operation at a time
// per node (ops.ts). It grants the primaries' leases. It lives as long as the coordinator process,
// across terms: after the leader lock is lost because the catalog database went away, it stays
// "interim" for a while with the last catalog it had, so the coordinator that was active can fail
// the home node (where the catalog lives) over and then follow the catalog to its new primary.
import {
  HaMode,
  create,
  NodeHealthSchema,
  type AgentReport,
  type Catalog,
  type Node,
  type NodeHealth,
} from '@tessera/proto';
import { AgentDirectiveSchema, Durability, NodeRole } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { AgentReports, DirectiveSink } from '../agent-reports.js';
import { DEFAULT_REPORT_FRESH_MS, type DurabilityText } from '../config.js';
import type { ServiceDeps } from '../grpc/deps.js';
import { decideFailover, eligibleReplicas } from './decide.js';
import { addressOf, type NodeView, type Seen } from './facts.js';
import { followEngine } from './follow.js';
import type { Leases } from './leases.js';
import type { FailoverMetrics } from './metrics.js';
import type { NodeMemory } from './node-memory.js';
import { NodeOps } from './ops.js';
import { planSync } from './sync-plan.js';

export type EngineMode =
  | { kind: 'standby' }
  | { kind: 'active' }
  /** The leader lock was lost; until `until` (monotonic) the home node may still be failed over. */
  | { kind: 'interim'; catalog: Catalog; until: number };

export interface EngineOptions {
  deps: Pick<ServiceDeps, 'term' | 'hub' | 'onEpoch'>;
  agents: AgentReports;
  leases: Leases;
  durability: DurabilityText;
  log: Logger;
  metrics: FailoverMetrics;
  /** A report older than this is stale (its agent may be gone). */
  freshMs?: number;
  /** A synchronous replica not streaming for this long is lost. */
  syncGraceMs?: number;
  catchUpBytes?: bigint;
  tickMs?: number;
  /** The home node's servers changed: the catalog database is on the first one now. */
  onHomeMoved(hosts: string[]): void;
}

export class FailoverEngine {
  private mode: EngineMode = { kind: 'standby' };
  private readonly memory = new Map<string, NodeMemory>();
  private readonly ops: NodeOps;
  private timer: NodeJS.Timeout | undefined;
  private scheduled = false;
  readonly freshMs: number;
  private readonly syncGraceMs: number;
  private readonly catchUpBytes: bigint;

  constructor(private readonly opts: EngineOptions) {
    this.freshMs = opts.freshMs ?? DEFAULT_REPORT_FRESH_MS;
    this.syncGraceMs = opts.syncGraceMs ?? 2_000;
    this.catchUpBytes = opts.catchUpBytes ?? 16n * 1024n * 1024n;
    this.ops = new NodeOps({
      ...opts,
      memory: (n) => this.mem(n),
      interim: () => this.mode.kind === 'interim',
    });
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.opts.tickMs ?? 250);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ops.idle();
  }

  setMode(mode: EngineMode): void {
    if (mode.kind === 'active') this.opts.leases.activated();
    this.mode = mode;
    if (mode.kind === 'standby') this.opts.agents.closeAll();
  }

  /**
   * Another coordinator holds the leader lock: an interim ends now, not when it runs out, and the
   * agents' streams end with `handOver` (naming the active coordinator), so they report there and
   * it can finish the home node's failover. Waiting out the interim would stall it meanwhile.
   */
  endInterim(handOver: Error): void {
    if (this.mode.kind !== 'interim') return;
    this.opts.log.warn(
      { err: handOver.message },
      'another coordinator holds the leader lock; handing the agents over to it',
    );
    this.mode = { kind: 'standby' };
    this.opts.agents.dismissAll(handOver);
  }

  get modeKind(): EngineMode['kind'] {
    return this.mode.kind;
  }

  /** Agent streams are served while active, and while interim (so the home node can fail over). */
  acceptsAgents(): boolean {
    return (
      this.mode.kind === 'active' ||
      (this.mode.kind === 'interim' && performance.now() < this.mode.until)
    );
  }

  private catalog(): Catalog | undefined {
    switch (this.mode.kind) {
      case 'active':
        return this.opts.deps.hub.current;
      case 'interim':
        return this.mode.catalog;
      case 'standby':
        return undefined;
      default: {
        const never: never = this.mode;
        return never;
      }
    }
  }

  private mem(node: string): NodeMemory {
    let m = this.memory.get(node);
    if (!m) {
      m = {
        adding: undefined,
        notStreamingSince: new Map(),
        status: '',
        lastFailover: '',
        refusal: '',
      };
      this.memory.set(node, m);
    }
    return m;
  }

  /** A report arrived on `sink`: grant the primary's lease when it may hold one; decide soon. */
  onReport(report: AgentReport, sink: DirectiveSink): void {
    const node = this.catalog()?.nodes.find((n) => n.name === report.node);
    if (this.mode.kind === 'active' && node && this.mayHoldLease(node, report)) {
      this.opts.leases.granted(node.name);
      sink.push(
        create(AgentDirectiveSchema, {
          action: 'lease',
          leaseMs: BigInt(this.opts.leases.leaseMs),
          reportSeq: report.seq,
        }),
      );
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.tick();
      });
    }
  }

  /**
   * A lease promises the primary that no replica is promoted in its place before it lapses. So it
   * is granted while the primary answers, and also while it does not but no replica could be
   * promoted anyway (then stopping it would only turn a slow node into a dead one).
   */
  private mayHoldLease(node: Node, report: AgentReport): boolean {
    if (node.haMode !== HaMode.NATIVE && node.haMode !== HaMode.UNSPECIFIED) return false;
    if (report.address !== addressOf(node) || report.inRecovery || report.fenced) return false;
    if (node.failingOver || this.ops.busyFailingOver(node.name)) return false;
    if (report.reachable && !report.stoppedByLease) return true;
    return eligibleReplicas(this.view(node, performance.now())).length === 0;
  }

  private view(node: Node, now: number): NodeView {
    const seen = (address: string): Seen | undefined => {
      const r = this.opts.agents.at(node.name, address);
      return r ? { report: r.report, ageMs: now - r.receivedAt } : undefined;
    };
    const replicas = new Map<string, Seen>();
    for (const r of node.replicas) {
      const s = seen(addressOf(r));
      if (s) replicas.set(addressOf(r), s);
    }
    return { node, primary: seen(addressOf(node)), replicas, freshMs: this.freshMs };
  }

  tick(): void {
    if (this.mode.kind === 'interim' && performance.now() >= this.mode.until) {
      this.opts.log.warn('the catalog did not come back in time; standing by');
      this.setMode({ kind: 'standby' });
    }
    const catalog = this.catalog();
    if (!catalog) return;
    const now = performance.now();
    for (const node of catalog.nodes) {
      this.opts.metrics.degraded.set({ node: node.name }, node.degraded ? 1 : 0);
      this.opts.metrics.failingOver.set({ node: node.name }, node.failingOver ? 1 : 0);
      this.opts.metrics.leaseRemaining.set(
        { node: node.name },
        this.opts.leases.remainingMs(node.name) / 1000,
      );
      if (this.mode.kind === 'interim' && node.role !== NodeRole.HOME) continue;
      if (this.ops.busy(node.name)) continue;
      try {
        if (node.haMode === HaMode.PATRONI || node.haMode === HaMode.CNPG) this.follow(node, now);
        else this.native(node, now);
      } catch (e) {
        this.opts.log.error(
          { node: node.name, err: e instanceof Error ? e.message : String(e) },
          'failover engine error',
        );
      }
    }
  }

  private native(node: Node, now: number): void {
    const view = this.view(node, now);
    const m = this.mem(node.name);
    const d = decideFailover({ view, leaseExpired: this.opts.leases.expired(node.name) });
    this.opts.metrics.refused.set({ node: node.name }, d.kind === 'refuse' ? 1 : 0);
    const interim = this.mode.kind === 'interim';
    switch (d.kind) {
      case 'none':
        m.status = d.waiting ?? '';
        m.refusal = '';
        if (!interim) this.maintain(node, view, now);
        return;
      case 'refuse':
        if (m.refusal !== d.reason) this.opts.log.error({ node: node.name }, d.reason);
        m.refusal = d.reason;
        m.status = d.reason;
        return;
      case 'cancel':
        if (!interim) this.ops.cancel(node, d.reason);
        return;
      case 'restart':
        if (!interim) this.ops.restart(node, d.reason);
        return;
      case 'failover':
        m.refusal = '';
        this.ops.failover(
          node,
          d.target,
          d.fenced ? 'fenced' : d.fenceFirst ? 'fence' : 'lease',
          d.reason,
        );
        return;
      case 'complete':
        if (!interim)
          this.ops.complete(
            node,
            d.target,
            d.fenced ? 'fenced' : d.fenceFirst ? 'fence' : 'lease',
            d.reason,
          );
        return;
      default: {
        const never: never = d;
        return never;
      }
    }
  }

  /** A healthy native node: its sync set, and former primaries kept fenced. */
  private maintain(node: Node, view: NodeView, now: number): void {
    this.ops.enforceFences(node, view);
    const p = view.primary;
    if (!p || p.ageMs > this.freshMs || !p.report.reachable || p.report.inRecovery) return;
    const m = this.mem(node.name);
    for (const r of node.replicas) {
      const row = p.report.standbys.find(
        (s) => s.applicationName === r.name && s.state === 'streaming',
      );
      if (row) m.notStreamingSince.delete(r.name);
      else if (!m.notStreamingSince.has(r.name)) m.notStreamingSince.set(r.name, now);
    }
    const notStreamingMs = new Map([...m.notStreamingSince].map(([k, t]) => [k, now - t]));
    const step = planSync({
      node,
      primary: p.report,
      durability: this.opts.durability,
      notStreamingMs,
      graceMs: this.syncGraceMs,
      adding: m.adding,
      catchUpBytes: this.catchUpBytes,
    });
    switch (step.kind) {
      case 'none':
        return;
      case 'adding':
        this.opts.log.info({ node: node.name, adding: step.adding?.name ?? null }, step.reason);
        m.adding = step.adding;
        return;
      case 'names':
        this.ops.setNames(node, step.value, step.reason);
        return;
      case 'record':
        if (step.states.some((s) => s.state === 'sync')) m.adding = undefined;
        this.ops.record(node, step.states, step.degraded, step.reason);
        return;
      default: {
        const never: never = step;
        return never;
      }
    }
  }

  private follow(node: Node, now: number): void {
    const step = followEngine(this.view(node, now), this.catchUpBytes);
    const m = this.mem(node.name);
    this.opts.metrics.refused.set({ node: node.name }, step.kind === 'refuse' ? 1 : 0);
    if (this.mode.kind !== 'active') return;
    switch (step.kind) {
      case 'none':
        m.refusal = '';
        return;
      case 'refuse':
        if (m.refusal !== step.reason) this.opts.log.error({ node: node.name }, step.reason);
        m.refusal = step.reason;
        m.status = step.reason;
        return;
      case 'hold':
        this.ops.hold(node, step.reason);
        return;
      case 'release':
        this.ops.cancel(node, step.reason);
        return;
      case 'move':
        this.ops.followMove(node, step.to, step.reason);
        return;
      case 'sync':
        this.ops.record(node, step.states, undefined, step.reason);
        return;
      default: {
        const never: never = step;
        return never;
      }
    }
  }

  /** Makes a fenced former primary (or a stuck replica) a replica of the current primary. */
  rejoin(node: string, host: string, port: number): Promise<bigint> {
    const catalog = this.catalog();
    if (this.mode.kind !== 'active' || !catalog) return this.ops.notActive();
    return this.ops.rejoin(catalog, node, host, port);
  }

  health(): NodeHealth[] {
    const catalog = this.catalog();
    if (!catalog) return [];
    return catalog.nodes.map((n) => {
      const m = this.mem(n.name);
      return create(NodeHealthSchema, {
        node: n.name,
        durability:
          this.opts.durability === 'required' ? Durability.REQUIRED : Durability.PREFERRED,
        leaseRemainingMs: BigInt(Math.round(this.opts.leases.remainingMs(n.name))),
        failover: this.ops.describe(n.name) ?? m.status,
        lastFailover: m.lastFailover,
      });
    });
  }
}
