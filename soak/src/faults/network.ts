// Faults on the network: a node partitioned from the coordinators only, from the routers only,
// or from every peer (its ends of those veth links down; needs network namespaces), and delay
// or loss on a node's links (the harness's link proxy in front of the node); each on the node's
// primary, the instance the catalog names.
import { peersOf } from '../net/topology.js';
import {
  candidates,
  drawRange,
  nodeAffects,
  type FaultContext,
  type FaultItem,
  type FaultKind,
} from './fault.js';

const MODES = ['coordinators', 'routers', 'all'] as const;
type Mode = (typeof MODES)[number];

/** The peers of `member` that a partition of this mode cuts it off from. */
function peersFor(ctx: FaultContext, item: FaultItem, member: string): string[] {
  const t = ctx.cluster.topology;
  if (!t) throw new Error('partitions need network namespaces');
  const mode = item.params.mode as Mode;
  const kindOf = new Map(t.members.map((m) => [m.name, m.kind]));
  return peersOf(t, member).filter((p) => {
    if (p === 'root') return false; // the harness observes; it is not a cluster member
    switch (mode) {
      case 'coordinators':
        return kindOf.get(p) === 'coordinator';
      case 'routers':
        return kindOf.get(p) === 'router';
      case 'all':
        return true;
      default:
        return false;
    }
  });
}

export const partitionNode: FaultKind = {
  name: 'partition-node',
  summary:
    'partition a node from the coordinators only, the routers only, or all its peers, for `seconds`',
  needs: 'netns',
  draw(rng, shape, entry) {
    const wanted = entry.params.mode;
    const mode =
      typeof wanted === 'string' && (MODES as readonly string[]).includes(wanted)
        ? wanted
        : rng.pick(MODES);
    return {
      target: rng.pick(
        candidates(
          entry,
          shape.nodes.map((n) => n.name),
        ),
      ),
      params: { mode },
    };
  },
  affects: nodeAffects,
  async inject(ctx, item) {
    // The node's primary (the catalog's); with mode "all" that cuts its replica off too.
    const member = ctx.cluster.node(item.target).primary.member;
    const peers = peersFor(ctx, item, member);
    await ctx.cluster.network!.partition(member, peers);
    return { mode: item.params.mode, instance: member, peers };
  },
  async heal(ctx, item) {
    // Every instance of the node: the one partitioned may not be the primary any more.
    const healed: string[] = [];
    for (const i of ctx.cluster.node(item.target).instances) {
      const peers = peersFor(ctx, item, i.member);
      await ctx.cluster.network!.heal(i.member, peers);
      healed.push(...peers.map((p) => `${i.member}-${p}`));
    }
    return { links: healed.length };
  },
};

export const linkDelay: FaultKind = {
  name: 'link-delay',
  summary: "delay (and jitter) on a node's links to the routers and coordinators, for `seconds`",
  needs: 'linkProxy',
  draw: (rng, shape, entry) => ({
    target: rng.pick(
      candidates(
        entry,
        shape.nodes.map((n) => n.name),
      ),
    ),
    params: {
      delayMs: drawRange(rng, entry, 'delayMs', [20, 120]),
      jitterMs: drawRange(rng, entry, 'jitterMs', [0, 30]),
    },
  }),
  affects: nodeAffects,
  async inject(ctx, item) {
    // Every connection through the node's proxy: its routers' and coordinators' (the harness
    // reads the node directly).
    await ctx.cluster.node(item.target).setLinkRules([
      {
        delayMs: Number(item.params.delayMs),
        jitterMs: Number(item.params.jitterMs),
        loss: 0,
        stallMs: 200,
      },
    ]);
    return {};
  },
  async heal(ctx, item) {
    await ctx.cluster.node(item.target).clearLinkRules();
    return {};
  },
};

export const linkLoss: FaultKind = {
  name: 'link-loss',
  summary:
    "loss on a node's links to the routers and coordinators (a lost segment stalls its stream for a retransmission), for `seconds`",
  needs: 'linkProxy',
  draw: (rng, shape, entry) => ({
    target: rng.pick(
      candidates(
        entry,
        shape.nodes.map((n) => n.name),
      ),
    ),
    params: {
      loss: drawRange(rng, entry, 'loss', [0.02, 0.2]),
      stallMs: drawRange(rng, entry, 'stallMs', [200, 200]),
    },
  }),
  affects: nodeAffects,
  async inject(ctx, item) {
    await ctx.cluster.node(item.target).setLinkRules([
      {
        delayMs: 1,
        jitterMs: 0,
        loss: Number(item.params.loss),
        stallMs: Number(item.params.stallMs),
      },
    ]);
    return {};
  },
  async heal(ctx, item) {
    await ctx.cluster.node(item.target).clearLinkRules();
    return {};
  },
};
