// Suite `overhead`: what a proxy in front of one Postgres costs. pgbench workloads run against
// Postgres directly, through the router (one-node catalog, pgbench tables distributed by bid),
// through PgBouncer in session mode (and in transaction mode, -M simple workloads only) and
// through a bare Node pipe, in interleaved rounds; reported as TPS, latency, ratios to direct and
// to PgBouncer from the same round, and the proxy's CPU per statement. With --router-baseline, another checkout's router runs too (router-base), and the
// router is judged against it round by round.
import { roundOrder } from '../harness/stats.js';
import { quietNode } from '../pgbench/load.js';
import { measure } from '../pgbench/measure.js';
import { WORKLOADS, workloadScript, type WorkloadKind } from '../pgbench/scripts.js';
import { capacityLines } from '../report/capacity.js';
import { wants } from '../options.js';
import { summarize, type Measurement, type SuiteResult } from '../report/model.js';
import { addGroupRatios, addRatios, pairedComparison } from '../report/ratios.js';
import {
  CPU_VS_PREPARED,
  VS_BASE,
  VS_PGBOUNCER_TXN,
  overheadChecks,
  overheadMetrics,
} from './overhead-checks.js';
import {
  describeWorkload,
  overheadWorkloads,
  preparedCounterparts,
  reasonToSitOut,
  sitOut,
  withSitOuts,
  type Workload,
} from './overhead-workloads.js';
import { pgbouncerTxnPoolSize, startPgbenchNode } from './pgbench-targets.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const DEFAULT_SCALE = 10;
/**
 * The router runs with its own default pool (--pool-size 20) in transaction mode: autocommit
 * reads gather pipelined on a few lanes whatever the pool size, and transactions get a backend
 * each without waiting at these client counts. PgBouncer in session mode keeps one per client;
 * in transaction mode (pgbouncer-txn) as many as the router (pgbouncerTxnPoolSize).
 */
export const ROUTER_POOL_SIZE = 20;
const TARGETS = [
  'direct',
  'router',
  'router-base',
  'pgbouncer',
  'pgbouncer-txn',
  'passthrough',
] as const;

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const { opts } = ctx;
  const startedAt = new Date();
  const scale = opts.scale ?? DEFAULT_SCALE;
  const workloads = overheadWorkloads(opts.clients, opts.workloads);
  const maxClients = Math.max(...workloads.map((w) => w.clients));
  // A target that would sit out every workload of this run is not started at all.
  const idle = TARGETS.filter(
    (n) => wants(opts, n) && sitOut(n, workloads)?.groups.length === workloads.length,
  );
  const node = await startPgbenchNode({
    name: 'bench-overhead',
    scale,
    opts,
    names: TARGETS.filter((n) => !idle.includes(n)),
    maxClients,
    poolSize: maxClients,
    routerPoolSize: ROUTER_POOL_SIZE,
    log: ctx.log,
  });
  try {
    const { pgSettings, targets: t } = node;
    const runs = (target: { name: string }, w: Workload) =>
      reasonToSitOut(target.name, w) === undefined;
    for (const target of t.running) {
      const out = sitOut(target.name, workloads);
      if (out) ctx.log(`  ${target.name} sits out ${out.groups.join('; ')}: ${out.reason}`);
    }
    const script = (kind: WorkloadKind) => workloadScript(kind, { from: 1, to: scale });
    const spec = (target: (typeof t.running)[number], w: Workload, durationS: number) => ({
      legs: [{ host: target.host, port: target.port, script: script(w.kind), clients: w.clients }],
      pids: target.pid === undefined ? [] : [target.pid],
      durationS,
      threads: opts.threads,
      statementsPerTxn: WORKLOADS[w.kind].statementsPerTxn,
      protocol: w.protocol,
    });
    if (opts.warmupS > 0) {
      ctx.log(`warm-up: ${opts.warmupS} s per target`);
      // The heaviest script a target runs: the last ones touch every table.
      for (const target of t.running) {
        const w = workloads.findLast((x) => runs(target, x));
        if (w) await measure(spec(target, w, opts.warmupS));
      }
    }
    const measurements: Measurement[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const order = roundOrder(t.running, round - 1);
      ctx.log(`round ${round}/${opts.rounds}: ${order.map((x) => x.name).join(', ')}`);
      for (const w of workloads) {
        for (const target of order) {
          if (!runs(target, w)) continue;
          await quietNode(node.pg);
          const r = await measure(spec(target, w, opts.durationS));
          measurements.push({
            round,
            group: w.group,
            target: target.name,
            values: r.values,
            error: r.error,
          });
          ctx.log(progressLine(w.group, target.name, r.values, r.error));
        }
      }
    }
    addRatios(measurements, 'direct', 'vsDirect');
    addRatios(measurements, 'pgbouncer', 'vsPgbouncer');
    addRatios(measurements, 'passthrough', 'cpuVsPipe', 'cpuUsPerStmt');
    const withBase = t.running.some((x) => x.name === 'router-base');
    if (withBase) addRatios(measurements, 'router-base', VS_BASE.key);
    const withTxn = t.running.some((x) => x.name === 'pgbouncer-txn');
    if (withTxn) addRatios(measurements, 'pgbouncer-txn', VS_PGBOUNCER_TXN.key);
    const twins = preparedCounterparts(workloads);
    if (twins.size > 0) addGroupRatios(measurements, twins, CPU_VS_PREPARED.key, 'cpuUsPerStmt');
    const metrics = overheadMetrics({
      base: withBase,
      pgbouncerTxn: withTxn,
      cpuVsPrepared: twins.size > 0,
    });
    const summary = summarize(measurements, metrics);
    const comparison =
      withBase && t.running.some((x) => x.name === 'router')
        ? pairedComparison(measurements, 'router', 'router-base')
        : undefined;
    return {
      suite: 'overhead',
      title: 'Tessera overhead: one node, pgbench',
      ...runStamp(ctx, startedAt, t.pgbouncerBin),
      settings: {
        rounds: opts.rounds,
        durationS: opts.durationS,
        warmupS: opts.warmupS,
        scale,
        pgbenchThreads: opts.threads,
        routerPoolMode: opts.routerPoolMode,
        proxyPoolSize: maxClients,
        routerPoolSize: opts.routerPoolSize ?? ROUTER_POOL_SIZE,
        pgbouncerTxnPoolSize: pgbouncerTxnPoolSize({
          opts,
          poolSize: maxClients,
          routerPoolSize: ROUTER_POOL_SIZE,
        }),
        ...(opts.routerPipelineDepth !== undefined
          ? { routerPipelineDepth: opts.routerPipelineDepth }
          : {}),
        ...(opts.routerBaseline !== undefined ? { routerBaseline: opts.routerBaseline } : {}),
        postgres: pgSettings,
      },
      targets: withSitOuts(t.infos, idle, workloads),
      groups: workloads.map((w) => ({ name: w.group, description: describeWorkload(w) })),
      metrics,
      chartMetric: 'tps',
      measurements,
      summary,
      notes: [
        'Ratios are taken within each round (same workload, same round), then the median over rounds.',
        'Proxy CPU is utime+stime of the proxy process (and its children) from /proc/<pid>/stat across the run, divided by transactions x statements per transaction.',
        "CPU x pipe is a proxy's CPU per statement over the bare Node pipe's, in the same round and workload.",
        'pgbench runs on the same machine and competes for its cores; every target pays that alike.',
        ...(withTxn
          ? [
              "x pgbouncer-txn is TPS over PgBouncer's in transaction mode (pgbouncer-txn, -M simple workloads only) in the same round and workload.",
            ]
          : []),
        ...(twins.size > 0
          ? [
              "CPU x prepared is a proxy's CPU per statement on a -M simple workload over its own on the -M prepared workload of the same kind and clients, in the same round.",
            ]
          : []),
        ...(withBase
          ? [
              "x router-base is TPS over router-base's (another checkout's build with the same flags and coordinator) in the same round and workload.",
            ]
          : []),
      ],
      comparison,
      capacity: capacityLines(summary),
      checks: overheadChecks(summary, comparison),
    };
  } finally {
    await node.stop();
  }
}

export function progressLine(
  group: string,
  target: string,
  v: Record<string, number | null>,
  error?: string,
): string {
  const f = (x: number | null | undefined, d: number) =>
    typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '-';
  const cpu =
    typeof v['cpuUsPerStmt'] === 'number' ? `  cpu ${f(v['cpuUsPerStmt'], 1)} µs/stmt` : '';
  const head = `  ${group.padEnd(28)} ${target.padEnd(13)}`;
  if (error !== undefined && v['tps'] === undefined) return `${head} FAILED: ${error}`;
  return `${head} ${f(v['tps'], 0).padStart(8)} tps  p50 ${f(v['p50Ms'], 2)} ms  p99 ${f(v['p99Ms'], 2)} ms${cpu}${error ? `  (${error})` : ''}`;
}

export const overhead: Suite = {
  name: 'overhead',
  summary:
    'one node: direct vs router vs pgbouncer (session; and transaction mode on -M simple) vs a bare Node pipe (vs another build of the router with --router-baseline); TPS, latency, CPU/stmt',
  run,
};
