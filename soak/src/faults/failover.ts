// Faults of replicated nodes (cluster.replicas 1; docs/soak.md, "Faults"): a data node's or the
// home node's primary SIGKILLed, for the coordinator to promote its synchronous replica, and a
// replica SIGKILLed. Each heal brings the instance back as docs/operations.md says it must come
// back (a former primary fenced, then rejoined as a replica of the new primary) and resolves
// once the node can fail over again.
import { restoreNode, waitNode, waitReplicated } from '../cluster/ha.js';
import type { PgInstance } from '../cluster/instance.js';
import {
  candidates,
  nodeAffects,
  type FaultContext,
  type FaultItem,
  type FaultKind,
} from './fault.js';

/** How long a failover fault waits for its node to have a synchronous replica first. */
const READY_TIMEOUT_MS = 120_000;
/** How long the catalog may take to name the promoted replica. */
const PROMOTION_TIMEOUT_MS = 60_000;

/** The instance each fault hit, for its heal (the node's primary may have changed meanwhile). */
const hit = new Map<number, PgInstance>();

/** The instance a fault on a node acts on: its primary now. Remembered for the heal. */
export function strike(
  ctx: FaultContext,
  item: FaultItem,
  which: 'primary' | 'replica',
): PgInstance {
  const n = ctx.cluster.node(item.target);
  const i = which === 'primary' ? n.primary : n.others[0];
  if (!i) throw new Error(`${item.target} has no replica`);
  hit.set(item.id, i);
  return i;
}

/** The instance a fault hit, forgotten (the heal of a node without replicas). */
export function forget(item: FaultItem): PgInstance | undefined {
  const i = hit.get(item.id);
  hit.delete(item.id);
  return i;
}

/** The heal of a fault on a replicated node: the instance it hit back, the node replicated again. */
export async function restoreStruck(
  ctx: FaultContext,
  item: FaultItem,
): Promise<Record<string, unknown>> {
  const n = ctx.cluster.node(item.target);
  hit.delete(item.id);
  await n.resume();
  return restoreNode(ctx.cluster, n);
}

/** SIGKILL of the node's primary, then the catalog naming its replica. */
async function killPrimary(ctx: FaultContext, item: FaultItem): Promise<Record<string, unknown>> {
  const n = ctx.cluster.node(item.target);
  const victim = strike(ctx, item, 'primary');
  const pid = victim.postmasterPid;
  const t0 = Date.now();
  await victim.kill();
  const after = await waitNode(
    ctx.cluster,
    n.name,
    (x) => !x.failingOver && `${x.host}:${x.port}` !== victim.catalogKey,
    PROMOTION_TIMEOUT_MS,
    'promoted replica in the catalog',
  );
  return {
    killed: victim.member,
    pid,
    promoted: n.instanceAt(`${after.host}:${after.port}`)?.member ?? `${after.host}:${after.port}`,
    inCatalogS: (Date.now() - t0) / 1000,
  };
}

/** A degraded node is not failed over (DESIGN.md 7): a failover starts from one that can be. */
async function canFailOverFirst(ctx: FaultContext, item: FaultItem): Promise<void> {
  await waitReplicated(ctx.cluster, [ctx.cluster.node(item.target)], READY_TIMEOUT_MS);
}

const dataNodes = (shapeNodes: { name: string; role: string }[]): string[] =>
  shapeNodes.filter((n) => n.role === 'data').map((n) => n.name);

export const failoverNode: FaultKind = {
  name: 'failover-node',
  summary:
    "SIGKILL a data node's primary: its synchronous replica is promoted; the former primary stays fenced for `seconds`, then rejoins as a replica",
  needs: 'replicas',
  draw: (rng, shape, entry) => ({
    target: rng.pick(candidates(entry, dataNodes(shape.nodes))),
    params: {},
  }),
  affects: nodeAffects,
  prepare: canFailOverFirst,
  inject: killPrimary,
  heal: restoreStruck,
};

export const homeFailover: FaultKind = {
  name: 'home-failover',
  summary:
    "SIGKILL the home node's primary (the catalog and the 2PC decision log): the coordinators follow the catalog to its promoted replica; the former primary rejoins as for failover-node",
  needs: 'replicas',
  draw: (_rng, shape) => ({
    target: shape.nodes.find((n) => n.role === 'home')?.name ?? 'home',
    params: {},
  }),
  affects: nodeAffects,
  prepare: canFailOverFirst,
  inject: killPrimary,
  heal: restoreStruck,
};

export const killReplica: FaultKind = {
  name: 'kill-replica',
  summary:
    "SIGKILL a node's replica; its agent starts it again, the heal if it did not, and waits until it is synchronous again",
  needs: 'replicas',
  draw: (rng, shape, entry) => ({
    target: rng.pick(
      candidates(
        entry,
        shape.nodes.map((n) => n.name),
      ),
    ),
    params: {},
  }),
  affects: nodeAffects,
  prepare: canFailOverFirst,
  async inject(ctx, item) {
    const victim = strike(ctx, item, 'replica');
    const pid = victim.postmasterPid;
    await victim.kill();
    return { killed: victim.member, pid };
  },
  heal: restoreStruck,
};
