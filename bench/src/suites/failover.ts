// Suite `failover`: under write load, kill a primary (SIGKILL of its postmaster and backends),
// alternately the data node's and the home node's (the catalog's own), --rounds times (default
// 10), rejoining the former primary after each. Two kinds of writers run side by side: "direct
// writers" straight to each node's primary as the catalog names it, and "router writers" through
// a router into tables whose rows live on the node (sharded `rt` on data1, global `gt` on home).
// Per kill: detection (kill to the coordinator's decision, from its log), promotion (decision to
// the replica promoted, fencing included), the new address in the catalog, and per kind of
// writer the first write acknowledged on the node again as a client sees it, client errors
// meanwhile, the statements the router held and their mean wait (its /metrics), and at the end
// acknowledged writes lost (must be 0); then p50 and max. The issue's target: writes flow again
// within 5 s (p50), 10 s at most.
import { setTimeout as sleep } from 'node:timers/promises';
import { stopServer } from '@tessera/pgctl';
import { waitFor } from '../harness/processes.js';
import type { Measurement, Metric, SuiteResult } from '../report/model.js';
import {
  NODES,
  addressOf,
  coordinatorLog,
  isSynced,
  startFailoverCluster,
  type FailoverCluster,
  type NodeName,
} from './failover-cluster.js';
import { heldBetween, type HoldCounters } from './failover-held.js';
import { killError, readBack, writesAfterKill, type WriteError } from './failover-outcome.js';
import { ROUTER_TABLES, startFailoverRouter, type FailoverRouter } from './failover-router.js';
import { failoverChecks, summarize } from './failover-summary.js';
import { Writers } from './failover-writers.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const WRITERS_PER_NODE = 2;
/** A kill whose node has no new primary in the catalog by then is a failed kill. */
const FAILOVER_TIMEOUT_MS = 60_000;
const DIRECT = 'direct writers';
const ROUTED = 'router writers';
const TARGETS = [DIRECT, ROUTED] as const;
type TargetName = (typeof TARGETS)[number];

const METRICS: Metric[] = [
  { key: 'detectionMs', label: 'detection ms', digits: 0 },
  { key: 'promotionMs', label: 'promotion ms', digits: 0 },
  { key: 'catalogMs', label: 'new address ms', digits: 0 },
  { key: 'firstWriteMs', label: 'first write ms', digits: 0 },
  { key: 'clientErrors', label: 'client errors', digits: 0 },
  { key: 'held', label: 'held statements', digits: 0 },
  { key: 'heldWaitMs', label: 'held wait ms', digits: 0 },
  { key: 'lostWrites', label: 'acked lost', digits: 0 },
];

const noValues = (): Record<string, number | null> =>
  Object.fromEntries(METRICS.map((m) => [m.key, null]));

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const startedAt = new Date();
  const kills = ctx.opts.rounds;
  const cluster = await startFailoverCluster(ctx.log);
  const measurements: Measurement[] = [];
  const notes: string[] = [];
  const writers = new Map<TargetName, Writers>();
  const lost = new Map<string, Map<NodeName, number | undefined>>();
  const errorsSeen = new Map<TargetName, WriteError[]>(TARGETS.map((t) => [t, []]));
  let router: FailoverRouter | undefined;
  try {
    for (const n of NODES) {
      const node = cluster.node(n)!;
      await cluster.servers.get(addressOf(node))!.query('create table t (id bigint primary key)');
    }
    ctx.log('starting the router');
    router = await startFailoverRouter(cluster, WRITERS_PER_NODE * NODES.length);
    const r = router;
    writers.set(
      DIRECT,
      new Writers({
        perNode: WRITERS_PER_NODE,
        server: (n) => {
          const node = cluster.node(n);
          return node && addressOf(node);
        },
        table: () => 't',
        queryTimeoutMs: 10_000,
      }),
    );
    writers.set(
      ROUTED,
      new Writers({
        perNode: WRITERS_PER_NODE,
        server: () => r.address,
        table: (n) => ROUTER_TABLES[n],
        // Longer than the router's --hold-timeout-ms (15 s): a held write ends as the router says.
        queryTimeoutMs: 60_000,
      }),
    );
    await sleep(2_000);
    for (let round = 1; round <= kills; round++) {
      const name: NodeName = round % 2 === 1 ? 'data1' : 'home';
      const group = `kill ${round}: ${name}`;
      const ready = await waitFor(async () => isSynced(cluster.node(name)), 180_000, 200);
      if (!ready) {
        // An earlier kill of this node did not complete: nothing to fail over to. Not killed.
        const error = `not killed: ${name} has no synchronous replica to fail over to`;
        ctx.log(`kill ${round}/${kills}: ${error}`);
        for (const target of TARGETS)
          measurements.push({ round, group, target, values: noValues(), error });
        continue;
      }
      const before = cluster.node(name)!;
      const oldAddr = addressOf(before);
      const holdBefore = await r.holdCounters();
      ctx.log(`kill ${round}/${kills}: ${name} primary ${oldAddr}`);
      const killedAt = Date.now();
      await stopServer(cluster.servers.get(oldAddr)!.dataDir, 'kill');
      const window = { node: name, killedAt, goneAt: Date.now(), oldServer: oldAddr };
      const moved = await waitFor(
        async () => {
          const n = cluster.node(name);
          return n !== undefined && addressOf(n) !== oldAddr && !n.failingOver;
        },
        FAILOVER_TIMEOUT_MS,
        20,
      );
      const catalogMs = moved ? Date.now() - killedAt : null;
      const after = (t: TargetName) => {
        const w = writers.get(t)!;
        return writesAfterKill(w.acks, w.errors, window);
      };
      if (moved)
        await waitFor(
          async () => TARGETS.every((t) => after(t).firstAckAt !== undefined),
          30_000,
          20,
        );
      // Held statements end their wait at the epoch that names the new primary, before any
      // first write through the router: a short pause lets the counters be updated.
      await sleep(200);
      const held = heldBetween(
        holdBefore,
        await r.holdCounters().catch((): HoldCounters => holdBefore),
      );
      const log = coordinatorLog(cluster).filter(
        (l) => l.time >= killedAt - 50 && l.fields['node'] === name,
      );
      const decided = log.find((l) => l.msg.startsWith('failing over'));
      const promoted = log.find((l) => l.msg === 'replica promoted');
      const line: string[] = [];
      for (const target of TARGETS) {
        const w = after(target);
        errorsSeen.get(target)!.push(...w.errors);
        const values = {
          detectionMs: decided ? decided.time - killedAt : null,
          promotionMs: promoted ? Number(promoted.fields['promotedMs']) : null,
          catalogMs,
          firstWriteMs: w.firstAckAt !== undefined ? w.firstAckAt - killedAt : null,
          clientErrors: w.errors.length,
          held: target === ROUTED ? held.held : null,
          heldWaitMs: target === ROUTED ? held.meanWaitMs : null,
          lostWrites: null,
        };
        const error = killError(
          {
            detected: decided !== undefined,
            promoted: promoted !== undefined,
            newAddress: moved,
            firstWrite: w.firstAckAt !== undefined,
          },
          FAILOVER_TIMEOUT_MS,
        );
        measurements.push({
          round,
          group,
          target,
          values,
          ...(error === undefined ? {} : { error }),
        });
        if (round === 1 || target === DIRECT)
          line.push(
            `detection ${values.detectionMs} ms, promotion ${values.promotionMs} ms, catalog ${catalogMs} ms`,
          );
        line.push(
          `${target}: first write ${values.firstWriteMs} ms, ${values.clientErrors} client errors${error === undefined ? '' : ` (${error})`}`,
        );
      }
      const reasons = Object.entries(held.byReason).map(([k, v]) => `${v} ${k}`);
      line.push(
        `router held ${held.held}${reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}, mean wait ${held.meanWaitMs === null ? '-' : Math.round(held.meanWaitMs)} ms`,
      );
      ctx.log(`  ${[...new Set(line)].join('; ')}`);
      if (moved && round < kills) {
        ctx.log(`  rejoining ${oldAddr}`);
        try {
          await cluster.admin.rejoinNode({ name }, { deadlineMs: 600_000 });
        } catch (e) {
          const why = `rejoin of ${oldAddr} after kill ${round} failed: ${e instanceof Error ? e.message : String(e)}`;
          ctx.log(`  ${why}`);
          notes.push(why);
        }
      }
    }
    await sleep(1_000);
    for (const w of writers.values()) await w.stop();
    for (const target of TARGETS)
      lost.set(target, await lostWrites(cluster, target, writers.get(target)!, notes));
    const acked = (t: TargetName) =>
      NODES.map((n) => `${n} ${writers.get(t)!.acked.get(n)!.size}`).join(', ');
    notes.push(
      `Direct writers: ${WRITERS_PER_NODE} per node, autocommit INSERTs of unique ids into t, straight to the node's primary as the catalog names it (no router, so nothing is held); acknowledged: ${acked(DIRECT)}.`,
      `Router writers: ${WRITERS_PER_NODE} per node, the same INSERTs through one router (transaction pooling, its default --hold-timeout-ms), into rt (sharded, every range on data1) for data1 and gt (global, on home) for home; acknowledged: ${acked(ROUTED)}. Most common client errors through the router: ${commonErrors(errorsSeen.get(ROUTED)!)}.`,
      'Detection and promotion come from the active coordinator\'s log: kill to its decision to fail over, and decision to the replica promoted (the old primary fenced first). "first write" is the kill to the first INSERT acknowledged after it that cannot have run on the killed primary (issued once it was gone; direct writers: on another server), as a client sees it; "client errors" are the writers\' failures on the node from the kill until then.',
      '"held statements" is the router\'s tessera_router_hold_seconds_count from just before the kill until both kinds of writers have had their first write after it (every reason: node failing over, range frozen, router lease lapsed; any node\'s statements), "held wait" their mean wait (its _sum over the count).',
      'A home node kill also loses the catalog database with it: the coordinator fails the home node over first and then follows the catalog there.',
    );
  } finally {
    for (const w of writers.values()) await w.stop();
    await router?.stop();
    await cluster.stop();
  }

  return {
    suite: 'failover',
    title: 'Tessera failover: primary kills under write load',
    ...runStamp(ctx, startedAt),
    settings: { rounds: kills, writersPerNode: WRITERS_PER_NODE, quick: ctx.opts.quick },
    targets: [
      { name: DIRECT, detail: "autocommit INSERTs straight to each node's current primary" },
      {
        name: ROUTED,
        detail: `autocommit INSERTs through the router (${router?.target.detail ?? 'not started'})`,
      },
    ],
    groups: [...new Set(measurements.map((m) => m.group))].map((g) => ({
      name: g,
      description: `SIGKILL of the ${g.endsWith('home') ? 'home' : 'data'} node's primary`,
    })),
    metrics: METRICS,
    chartMetric: 'firstWriteMs',
    measurements,
    summary: summarize(measurements, METRICS, TARGETS, lost),
    notes,
    baseline: DIRECT,
    checks: failoverChecks(measurements, TARGETS, kills, lost),
  };
}

/** Acknowledged ids of one kind of writer missing on each node's primary now (undefined: unreadable). */
async function lostWrites(
  cluster: FailoverCluster,
  target: TargetName,
  w: Writers,
  notes: string[],
): Promise<Map<NodeName, number | undefined>> {
  const byNode = new Map<NodeName, number | undefined>();
  for (const n of NODES) {
    const instances = cluster.instances(n).map((s) => ({
      address: addressOf(s),
      query: <T>(sql: string) => s.query<T & Record<string, unknown>>(sql) as Promise<T[]>,
    }));
    const table = target === DIRECT ? 't' : ROUTER_TABLES[n];
    const rb = await readBack(instances, w.acked.get(n)!, table);
    byNode.set(n, rb.kind === 'read' ? rb.lost : undefined);
    if (rb.kind === 'unreadable')
      notes.push(
        `The acknowledged writes of ${n} (${target}, table ${table}) could not be read back: ${rb.reason}.`,
      );
  }
  return byNode;
}

/** The three most frequent error messages, with their counts. */
function commonErrors(errors: readonly WriteError[]): string {
  const counts = new Map<string, number>();
  for (const e of errors) counts.set(e.message, (counts.get(e.message) ?? 0) + 1);
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3);
  return top.length === 0 ? 'none' : top.map(([m, n]) => `"${m}" (${n})`).join(', ');
}

export const failover: Suite = {
  name: 'failover',
  summary: 'primary kills under write load: detection, promotion, time to the first write, loss',
  defaults: { rounds: 10 },
  run,
};
