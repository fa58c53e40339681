// What the failover engine does (the I/O of its decisions), at most one operation per node at a
// time: a failover (hold the node's statements, fence the old primary, promote the sync replica,
// publish the new address), its completion, a restart of a primary nobody can replace, the sync
// set's steps, keeping former primaries fenced, following an HA engine's promotions, and rejoin.
import { standbyName } from '@tessera/pgctl';
import { NodeRole, ReplicaState, type Catalog, type Node, type Replica } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { AgentReports, DirectiveInit } from '../agent-reports.js';
import type { DurabilityText } from '../config.js';
import { failedPrecondition, notFound, unavailable } from '../errors.js';
import type { ServiceDeps } from '../grpc/deps.js';
import {
  beginFailover,
  cancelFailover,
  completeFailover,
  setDegraded,
  setReplicaStates,
} from '../store/replica-changes.js';
import { commitChange } from './commit.js';
import type { NodeMemory } from './node-memory.js';
import { addressOf, replicaSeen, type NodeView } from './facts.js';
import type { Leases } from './leases.js';
import type { FailoverMetrics } from './metrics.js';
import { desiredNames, type StateChange } from './sync-plan.js';

export interface OpsOptions {
  deps: Pick<ServiceDeps, 'term' | 'hub' | 'onEpoch'>;
  agents: AgentReports;
  leases: Leases;
  durability: DurabilityText;
  log: Logger;
  metrics: FailoverMetrics;
  memory(node: string): NodeMemory;
  interim(): boolean;
  onHomeMoved(hosts: string[]): void;
}

const FENCE_TIMEOUT_MS = 15_000;
const PROMOTE_TIMEOUT_MS = 90_000;
const DIRECTIVE_TIMEOUT_MS = 15_000;
const REJOIN_TIMEOUT_MS = 30 * 60_000;
/** Repeated operations of one kind on a node (restart, fence, names) wait this long. */
const RETRY_MS = 5_000;

/** How the old primary is known to take no writes: its agent fenced it already, fences it now, or its lease lapses. */
export type OldPrimary = 'fenced' | 'fence' | 'lease';

interface Running {
  what: string;
  failover: boolean;
  done: Promise<void>;
}

export class NodeOps {
  private readonly running = new Map<string, Running>();
  private readonly lastTry = new Map<string, number>();

  constructor(private readonly o: OpsOptions) {}

  busy(node: string): boolean {
    return this.running.has(node);
  }

  busyFailingOver(node: string): boolean {
    return this.running.get(node)?.failover === true;
  }

  describe(node: string): string | undefined {
    return this.running.get(node)?.what;
  }

  async idle(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  notActive(): Promise<never> {
    return Promise.reject(unavailable('this coordinator is not the active one'));
  }

  /** Runs `fn` as the node's one operation, unless one runs or `key` was tried within RETRY_MS. */
  private run(
    node: string,
    what: string,
    fn: () => Promise<void>,
    opts: { key?: string; failover?: boolean } = {},
  ): boolean {
    if (this.running.has(node)) return false;
    if (opts.key !== undefined) {
      const last = this.lastTry.get(opts.key);
      if (last !== undefined && performance.now() - last < RETRY_MS) return false;
      this.lastTry.set(opts.key, performance.now());
    }
    const done = fn()
      .catch((e: unknown) => {
        this.o.log.error(
          { node, op: what, err: e instanceof Error ? e.message : String(e) },
          'failover operation failed; will decide again',
        );
      })
      .finally(() => this.running.delete(node));
    this.running.set(node, { what, failover: opts.failover ?? false, done });
    return true;
  }

  private commit(
    name: string,
    node: Node,
    detail: Record<string, unknown>,
    fn: Parameters<typeof commitChange>[4],
  ) {
    return commitChange(this.o.deps, this.o.log, name, { node: node.name, ...detail }, fn);
  }

  cancel(node: Node, reason: string): void {
    this.run(node.name, 'cancelling a failover', async () => {
      await this.commit('CancelFailover', node, { reason }, (tx) => cancelFailover(tx, node.name));
    });
  }

  hold(node: Node, reason: string): void {
    this.run(node.name, 'holding statements while the HA engine changes the primary', async () => {
      await this.commit('HoldNode', node, { reason }, (tx) => beginFailover(tx, node.name, ''));
    });
  }

  restart(node: Node, reason: string): void {
    this.run(
      node.name,
      'starting the primary again',
      async () => {
        this.o.log.warn({ node: node.name }, `starting the primary again: ${reason}`);
        await this.expectOk(node, addressOf(node), { action: 'start', reason }, PROMOTE_TIMEOUT_MS);
      },
      { key: `${node.name}\0restart` },
    );
  }

  /** The value the promoted replica starts with: the sync set the node has once it is primary. */
  private namesAfter(node: Node, target: Replica): string {
    const former = standbyName(node.name, node.host, node.port);
    const after: Node = {
      ...node,
      replicas: [
        ...node.replicas
          .filter((r) => addressOf(r) !== addressOf(target))
          .map((r) => ({
            ...r,
            state: r.state === ReplicaState.SYNC ? ReplicaState.CATCHING_UP : r.state,
          })),
        { ...target, host: node.host, port: node.port, name: former, state: ReplicaState.FENCED },
      ],
    };
    return desiredNames(after, this.o.durability, undefined);
  }

  failover(node: Node, target: Replica, fence: OldPrimary, reason: string): void {
    const started = performance.now();
    const interim = this.o.interim();
    this.run(
      node.name,
      `failing over to ${addressOf(target)}`,
      async () => {
        this.o.log.warn(
          { node: node.name, from: addressOf(node), to: addressOf(target), fence, interim },
          `failing over: ${reason}`,
        );
        // Routers hold the node's statements from this epoch on. (Not when the node holds the
        // catalog itself and it is gone: then the promotion comes first and is recorded after.)
        // The catalog write runs alongside the fence and the promotion, which do not need it
        // (the old primary is fenced before anything is promoted, whatever routers know): on a
        // loaded catalog it takes a second or more, which writes would otherwise wait on too.
        const begun =
          !interim && !node.failingOver
            ? this.commit('BeginFailover', node, { target: addressOf(target), reason }, (tx) =>
                beginFailover(tx, node.name, addressOf(target)),
              )
            : undefined;
        begun?.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
        await this.fenceOld(node, fence);
        const names = this.namesAfter(node, target);
        await this.expectOk(
          node,
          addressOf(target),
          { action: 'promote', reason, synchronousStandbyNames: names },
          PROMOTE_TIMEOUT_MS,
        );
        await begun;
        const promotedMs = performance.now() - started;
        this.o.log.warn(
          { node: node.name, primary: addressOf(target), promotedMs: Math.round(promotedMs) },
          'replica promoted',
        );
        if (interim) {
          // The catalog is on this node: it is on the promoted replica now.
          this.o.onHomeMoved([addressOf(target), addressOf(node)]);
          return;
        }
        await this.finish(node, target, started, reason);
      },
      { failover: true },
    );
  }

  complete(node: Node, target: Replica, fence: OldPrimary, reason: string): void {
    const started = performance.now();
    this.run(
      node.name,
      `recording ${addressOf(target)} as the primary`,
      async () => {
        this.o.log.warn({ node: node.name, primary: addressOf(target) }, reason);
        await this.fenceOld(node, fence);
        await this.finish(node, target, started, reason);
      },
      { failover: true },
    );
  }

  /** The old primary is stopped for good before anyone else may take writes. */
  private async fenceOld(node: Node, how: OldPrimary): Promise<void> {
    if (how === 'fenced') return;
    if (how === 'fence') {
      try {
        await this.expectOk(
          node,
          addressOf(node),
          { action: 'fence', reason: 'a replica is being promoted in its place' },
          FENCE_TIMEOUT_MS,
        );
        return;
      } catch (e) {
        this.o.log.warn(
          { node: node.name, err: e instanceof Error ? e.message : String(e) },
          'could not fence the old primary through its agent; waiting for its lease to lapse',
        );
      }
    }
    const deadline = performance.now() + this.o.leases.leaseMs + this.o.leases.marginMs + 5_000;
    while (!this.o.leases.expired(node.name)) {
      if (performance.now() > deadline) throw new Error("the old primary's lease did not lapse");
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async finish(
    node: Node,
    target: Replica,
    started: number,
    reason: string,
  ): Promise<void> {
    const formerName = this.formerName(node);
    const others = node.replicas.filter(
      (r) => addressOf(r) !== addressOf(target) && r.state !== ReplicaState.FENCED,
    );
    const degradedReason = `failed over to ${addressOf(target)}: no replica is synchronous until one catches up (tessera nodes rejoin ${node.name} makes the former primary ${addressOf(node)} a replica)`;
    await this.commit(
      'CompleteFailover',
      node,
      { primary: addressOf(target), former: addressOf(node), reason },
      (tx) =>
        completeFailover(tx, {
          node: node.name,
          host: target.host,
          port: target.port,
          formerState: 'fenced',
          formerName,
          degraded: true,
          degradedReason,
        }),
    );
    const ms = performance.now() - started;
    this.o.metrics.failovers.inc({ node: node.name, outcome: 'done' });
    this.o.metrics.promotionSeconds.set({ node: node.name }, ms / 1000);
    const m = this.o.memory(node.name);
    m.adding = undefined;
    m.notStreamingSince.clear();
    m.lastFailover = `${new Date().toISOString()} from ${addressOf(node)} to ${addressOf(target)} in ${Math.round(ms)} ms (${reason})`;
    if (node.role === NodeRole.HOME)
      this.o.onHomeMoved([addressOf(target), ...others.map(addressOf)]);
    // Other replicas streamed from the old primary: point them at the new one.
    for (const r of others) {
      this.o.agents
        .directive(
          node.name,
          addressOf(r),
          {
            action: 'follow',
            reason: 'the node failed over',
            primaryHost: target.host,
            primaryPort: target.port,
            applicationName: r.name,
          },
          DIRECTIVE_TIMEOUT_MS,
        )
        .catch((e: unknown) =>
          this.o.log.warn(
            {
              node: node.name,
              replica: addressOf(r),
              err: e instanceof Error ? e.message : String(e),
            },
            'could not re-point a replica at the new primary; rejoin it',
          ),
        );
    }
  }

  /** The name the former primary streams under once it rejoins (its agent's, else derived). */
  private formerName(node: Node): string {
    const own = this.o.agents.at(node.name, addressOf(node))?.report.instanceName ?? '';
    return own !== '' ? own : standbyName(node.name, node.host, node.port);
  }

  followMove(node: Node, to: Replica, reason: string): void {
    const started = performance.now();
    this.run(node.name, `following the HA engine to ${addressOf(to)}`, async () => {
      await this.commit('FollowPrimary', node, { primary: addressOf(to), reason }, (tx) =>
        completeFailover(tx, {
          node: node.name,
          host: to.host,
          port: to.port,
          formerState: 'catching_up',
          formerName: this.formerName(node),
          degraded: false,
          degradedReason: '',
        }),
      );
      this.o.metrics.failovers.inc({ node: node.name, outcome: 'followed' });
      this.o.memory(node.name).lastFailover =
        `${new Date().toISOString()} followed to ${addressOf(to)} in ${Math.round(performance.now() - started)} ms (${reason})`;
      if (node.role === NodeRole.HOME) this.o.onHomeMoved([addressOf(to)]);
    });
  }

  setNames(node: Node, value: string, reason: string): void {
    this.run(
      node.name,
      'setting synchronous_standby_names',
      async () => {
        this.o.log.info({ node: node.name, synchronousStandbyNames: value }, reason);
        await this.expectOk(
          node,
          addressOf(node),
          { action: 'set_sync', reason, synchronousStandbyNames: value },
          DIRECTIVE_TIMEOUT_MS,
        );
      },
      { key: `${node.name}\0names\0${value}` },
    );
  }

  record(
    node: Node,
    states: StateChange[],
    degraded: { on: boolean; reason: string } | undefined,
    reason: string,
  ): void {
    this.run(node.name, 'recording the sync set', async () => {
      await this.commit(
        'SyncSet',
        node,
        {
          states: states.map((s) => `${s.replica.name}=${s.state}`),
          degraded: degraded?.on ?? null,
          reason,
        },
        async (tx) => {
          await setReplicaStates(
            tx,
            states.map((s) => ({
              node: node.name,
              host: s.replica.host,
              port: s.replica.port,
              state: s.state,
            })),
          );
          if (degraded) await setDegraded(tx, node.name, degraded.on, degraded.reason);
        },
      );
    });
  }

  /** Former primaries stay down: one that runs unfenced is fenced by its agent. */
  enforceFences(node: Node, view: NodeView): void {
    for (const r of node.replicas) {
      if (r.state !== ReplicaState.FENCED) continue;
      const s = replicaSeen(view, r)?.report;
      if (!s || s.fenced || !s.reachable) continue;
      this.run(
        node.name,
        `fencing former primary ${addressOf(r)}`,
        async () => {
          this.o.log.warn(
            { node: node.name, instance: addressOf(r) },
            'a former primary runs unfenced; fencing it',
          );
          await this.expectOk(
            node,
            addressOf(r),
            {
              action: 'fence',
              reason: 'a former primary is never routed to again until it rejoins',
            },
            FENCE_TIMEOUT_MS,
          );
        },
        { key: `${node.name}\0fence\0${addressOf(r)}` },
      );
      return;
    }
  }

  rejoin(catalog: Catalog, nodeName: string, host: string, port: number): Promise<bigint> {
    const node = catalog.nodes.find((n) => n.name === nodeName);
    if (!node) return Promise.reject(notFound(`no node named ${nodeName}`));
    const candidates = node.replicas.filter((r) =>
      host === '' ? r.state === ReplicaState.FENCED : r.host === host && r.port === port,
    );
    if (candidates.length === 0)
      return Promise.reject(
        failedPrecondition(
          host === ''
            ? `node ${nodeName} has no fenced former primary; name the instance to rejoin (HOST:PORT)`
            : `${host}:${port} is not a replica of node ${nodeName}`,
        ),
      );
    if (candidates.length > 1)
      return Promise.reject(
        failedPrecondition(
          `node ${nodeName} has several fenced instances; name the one to rejoin (${candidates.map(addressOf).join(', ')})`,
        ),
      );
    const r = candidates[0]!;
    if (r.state === ReplicaState.SYNC)
      return Promise.reject(failedPrecondition(`${addressOf(r)} is a synchronous replica already`));
    const primary = this.o.agents.at(node.name, addressOf(node))?.report;
    if (!primary || !primary.reachable || primary.inRecovery)
      return Promise.reject(
        failedPrecondition(
          `the primary of ${nodeName} (${addressOf(node)}) is not reported healthy; rejoin needs a primary to copy from`,
        ),
      );
    if (!this.o.agents.at(node.name, addressOf(r)))
      return Promise.reject(
        failedPrecondition(
          `no agent reports for ${addressOf(r)}; start its agent (tessera-agent --node ${nodeName} --address ${addressOf(r)} --data-dir ...)`,
        ),
      );
    return new Promise<bigint>((resolve, reject) => {
      const started = this.run(node.name, `rejoining ${addressOf(r)}`, async () => {
        try {
          await this.commit('RejoinStart', node, { instance: addressOf(r) }, (tx) =>
            setReplicaStates(tx, [
              { node: node.name, host: r.host, port: r.port, state: 'rejoining' },
            ]),
          );
          try {
            await this.expectOk(
              node,
              addressOf(r),
              {
                action: 'rejoin',
                reason: 'tessera nodes rejoin',
                primaryHost: node.host,
                primaryPort: node.port,
                applicationName: r.name,
              },
              REJOIN_TIMEOUT_MS,
            );
          } catch (e) {
            await this.commit('RejoinFailed', node, { instance: addressOf(r) }, (tx) =>
              setReplicaStates(tx, [
                {
                  node: node.name,
                  host: r.host,
                  port: r.port,
                  state: r.state === ReplicaState.FENCED ? 'fenced' : 'catching_up',
                },
              ]),
            ).catch(() => undefined);
            throw e;
          }
          resolve(
            await this.commit('RejoinDone', node, { instance: addressOf(r) }, (tx) =>
              setReplicaStates(tx, [
                { node: node.name, host: r.host, port: r.port, state: 'catching_up' },
              ]),
            ),
          );
        } catch (e) {
          reject(
            e instanceof Error
              ? failedPrecondition(`rejoin of ${addressOf(r)} failed: ${e.message}`)
              : e,
          );
        }
      });
      if (!started)
        reject(
          unavailable(
            `node ${nodeName} is busy (${this.describe(nodeName) ?? 'an operation'}); retry in a moment`,
          ),
        );
    });
  }

  /** Sends a directive and throws its error when the agent reports failure. */
  private async expectOk(
    node: Node,
    address: string,
    d: DirectiveInit,
    timeoutMs: number,
  ): Promise<void> {
    const r = await this.o.agents.directive(node.name, address, d, timeoutMs);
    if (!r.ok) throw new Error(`the agent of ${address} could not ${d.action}: ${r.error}`);
  }
}
