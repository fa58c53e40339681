// Faults on the services' processes: SIGKILL of a router (restarted after a while), SIGKILL of
// the active coordinator (the standby takes over; the killed one comes back as standby), and a
// router restarted with a two-phase-commit kill point (TESSERA_FAULT_2PC) that it reaches by
// itself on its next commit across nodes.
import { setTimeout as sleep } from 'node:timers/promises';
import { candidates, type FaultKind } from './fault.js';

export const killRouter: FaultKind = {
  name: 'kill-router',
  summary: 'SIGKILL a router, restart it after `seconds`',
  draw: (rng, shape, entry) => ({ target: rng.pick(candidates(entry, shape.routers)), params: {} }),
  affects: (item) => ({ via: [item.target] }),
  async inject(ctx, item) {
    const r = ctx.cluster.router(item.target);
    const pid = r.process.pid;
    await r.process.signal('SIGKILL');
    return { pid };
  },
  async heal(ctx, item) {
    const r = ctx.cluster.router(item.target);
    await ctx.cluster.restartService(r);
    return { pid: r.process.pid };
  },
};

export const killCoordinator: FaultKind = {
  name: 'kill-coordinator',
  summary: 'SIGKILL the active coordinator (the standby takes over), restart it after `seconds`',
  draw: () => ({ target: 'leader', params: {} }),
  affects: () => ({ crossNode: true }),
  async inject(ctx, item) {
    const leader = ctx.cluster.vip.leader ?? (await ctx.cluster.vip.waitForLeader(30_000));
    item.params.killed = leader;
    const c = ctx.cluster.coordinator(leader);
    const pid = c.process.pid;
    await c.process.signal('SIGKILL');
    // The standby takes the lock once the killed one's catalog session is gone.
    let next: string | undefined;
    for (const until = Date.now() + 30_000; Date.now() < until;) {
      await sleep(200);
      await ctx.cluster.vip.poll();
      const now = ctx.cluster.vip.leader;
      if (now !== undefined && now !== leader) {
        next = now;
        break;
      }
    }
    return { killed: leader, pid, newLeader: next ?? null };
  },
  async heal(ctx, item) {
    const c = ctx.cluster.coordinator(String(item.params.killed));
    await ctx.cluster.restartService(c);
    return { restarted: c.name, leader: ctx.cluster.vip.leader ?? null };
  },
};

const POINTS = [
  'before-prepare',
  'after-prepare',
  'after-decision',
  'after-commit',
  'after-all',
] as const;

export const twopcKill: FaultKind = {
  name: 'twopc-kill',
  summary:
    'restart a router with a 2PC kill point (TESSERA_FAULT_2PC); it SIGKILLs itself at its next cross-node commit',
  draw(rng, shape, entry) {
    const point = rng.pick(POINTS);
    const data = shape.nodes.filter((n) => n.role === 'data').map((n) => n.name);
    const full =
      point === 'after-prepare' || point === 'after-commit' ? `${point}:${rng.pick(data)}` : point;
    return { target: rng.pick(candidates(entry, shape.routers)), params: { point: full } };
  },
  selfTimed: true,
  affects: (item) => ({ via: [item.target], crossNode: true }),
  async inject(ctx, item) {
    const r = ctx.cluster.router(item.target);
    await r.process.stop(5_000);
    r.process.nextEnv = { TESSERA_FAULT_2PC: String(item.params.point) };
    r.process.start();
    r.process.expectExit();
    await ctx.cluster.waitForRouter(r);
    // The fault is armed; it fires at the first commit across nodes that reaches the point.
    const fired = await Promise.race([
      r.process.exited.then(() => true),
      sleep(Math.max(1, item.seconds) * 1000).then(() => false),
    ]);
    return { point: item.params.point, fired };
  },
  async heal(ctx, item) {
    const r = ctx.cluster.router(item.target);
    const stillArmed = r.process.running;
    if (stillArmed) await r.process.stop(5_000);
    await ctx.cluster.restartService(r);
    return { point: item.params.point, fired: !stillArmed };
  },
};
