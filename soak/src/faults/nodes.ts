// Faults on Postgres nodes, on the node's primary (the catalog's): SIGKILL of the server and its
// backends (started again after `seconds`), SIGSTOP of the whole process tree (SIGCONT after
// `seconds`), and a clean restart (fast shutdown, start). Without replicas the node is out
// meanwhile: writes to it fail or are unknown. With replicas (and agents) each of these is a
// failure the coordinator may answer with a failover (the agent sees its server down, or frozen
// past its probe timeout): the heal then brings the instance back as failover-node's heal does.
import { setTimeout as sleep } from 'node:timers/promises';
import { forget, restoreStruck, strike } from './failover.js';
import {
  candidates,
  nodeAffects,
  type FaultContext,
  type FaultItem,
  type FaultKind,
} from './fault.js';

const nodeTarget: FaultKind['draw'] = (rng, shape, entry) => ({
  target: rng.pick(
    candidates(
      entry,
      shape.nodes.map((n) => n.name),
    ),
  ),
  params: {},
});

/** Starts the node's server again; a replicated node's instance comes back as it must. */
async function bringBack(ctx: FaultContext, item: FaultItem): Promise<Record<string, unknown>> {
  const n = ctx.cluster.node(item.target);
  if (n.replicated) return restoreStruck(ctx, item);
  const i = forget(item) ?? n.primary;
  await i.resume();
  await i.start();
  await sleep(0);
  return { pid: i.postmasterPid };
}

export const killNode: FaultKind = {
  name: 'kill-node',
  summary: "SIGKILL a node's primary (postmaster and backends), start it again after `seconds`",
  draw: nodeTarget,
  affects: nodeAffects,
  async inject(ctx, item) {
    const i = strike(ctx, item, 'primary');
    const pid = i.postmasterPid;
    await i.kill();
    return { pid, instance: i.member };
  },
  heal: bringBack,
};

export const pauseNode: FaultKind = {
  name: 'pause-node',
  summary: "SIGSTOP a node's primary (postmaster and backends), SIGCONT after `seconds`",
  draw: nodeTarget,
  affects: nodeAffects,
  async inject(ctx, item) {
    const i = strike(ctx, item, 'primary');
    i.pause();
    return { pids: i.pids().length, instance: i.member };
  },
  heal: bringBack,
};

export const restartNode: FaultKind = {
  name: 'restart-node',
  summary:
    "clean restart of a node's primary (fast shutdown, then start); `seconds` is the pause between",
  draw: nodeTarget,
  affects: nodeAffects,
  async inject(ctx, item) {
    const i = strike(ctx, item, 'primary');
    await i.resume();
    await i.pg.stop('fast');
    return { instance: i.member };
  },
  heal: bringBack,
};
