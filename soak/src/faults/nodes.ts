// Faults on Postgres nodes: SIGKILL of the server and its backends (restarted after `seconds`;
// without replicas the node is out meanwhile: writes to it fail or are unknown), SIGSTOP of the
// whole process tree (SIGCONT after `seconds`), and a clean restart (fast shutdown, start).
import { setTimeout as sleep } from 'node:timers/promises';
import { candidates, nodeAffects, type FaultKind } from './fault.js';

const nodeTarget: FaultKind['draw'] = (rng, shape, entry) => ({
  target: rng.pick(
    candidates(
      entry,
      shape.nodes.map((n) => n.name),
    ),
  ),
  params: {},
});

export const killNode: FaultKind = {
  name: 'kill-node',
  summary: 'SIGKILL a node (postmaster and backends), start it again after `seconds`',
  draw: nodeTarget,
  affects: nodeAffects,
  async inject(ctx, item) {
    const n = ctx.cluster.node(item.target);
    const pid = n.postmasterPid;
    await n.kill();
    return { pid };
  },
  async heal(ctx, item) {
    const n = ctx.cluster.node(item.target);
    if (n.postmasterPid === undefined) await n.start();
    return { pid: n.postmasterPid };
  },
};

export const pauseNode: FaultKind = {
  name: 'pause-node',
  summary: 'SIGSTOP a node (postmaster and backends), SIGCONT after `seconds`',
  draw: nodeTarget,
  affects: nodeAffects,
  async inject(ctx, item) {
    const n = ctx.cluster.node(item.target);
    n.pause();
    return { pids: n.pids().length };
  },
  async heal(ctx, item) {
    await ctx.cluster.node(item.target).resume();
    return {};
  },
};

export const restartNode: FaultKind = {
  name: 'restart-node',
  summary: 'clean restart of a node (fast shutdown, then start); `seconds` is the pause between',
  draw: nodeTarget,
  affects: nodeAffects,
  async inject(ctx, item) {
    const n = ctx.cluster.node(item.target);
    await n.resume();
    await n.pg.stop('fast');
    return {};
  },
  async heal(ctx, item) {
    const n = ctx.cluster.node(item.target);
    if (n.postmasterPid === undefined) await n.start();
    await sleep(0);
    return { pid: n.postmasterPid };
  },
};
