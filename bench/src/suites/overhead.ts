// Suite `overhead`: what a proxy in front of one Postgres costs. pgbench workloads run against
// Postgres directly, through the router (one-node catalog, pgbench tables distributed by bid),
// through PgBouncer in session mode and through a bare Node pipe, in interleaved rounds; reported
// as TPS, latency, ratios to direct and to PgBouncer from the same round, and the proxy's CPU per
// statement. With --router-baseline, another checkout's router runs too (router-base), and the
// router is judged against it round by round.
import { roundOrder } from '../harness/stats.js';
import { UsageError } from '../options.js';
import { quietNode } from '../pgbench/load.js';
import { measure } from '../pgbench/measure.js';
import type { PgbenchProtocol } from '../pgbench/run.js';
import { WORKLOADS, workloadScript, type WorkloadKind } from '../pgbench/scripts.js';
import { capacityLines } from '../report/capacity.js';
import {
  summarize,
  type CheckResult,
  type Measurement,
  type Metric,
  type PairedComparison,
  type SuiteResult,
  type SummaryRow,
} from '../report/model.js';
import { addRatios, pairedComparison } from '../report/ratios.js';
import { startPgbenchNode } from './pgbench-targets.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const DEFAULT_SCALE = 10;
/**
 * The router runs with its own default pool (--pool-size 20) in transaction mode: autocommit
 * reads gather pipelined on a few lanes whatever the pool size, and transactions get a backend
 * each without waiting at these client counts. PgBouncer in session mode keeps one per client.
 */
export const ROUTER_POOL_SIZE = 20;
const TARGETS = ['direct', 'router', 'router-base', 'pgbouncer', 'passthrough'] as const;
/** The router must not fall further below its baseline than this, in any workload. */
export const MIN_VS_BASELINE = 0.95;

/**
 * The issue's workloads: -S at 16 and 64 clients, writes and TPC-B-within-branch at 16, all
 * -M prepared; and -S -M simple at 16, the literal-text path (a parse per new text).
 */
const PLAN: readonly { kind: WorkloadKind; protocol: PgbenchProtocol; clients: number[] }[] = [
  { kind: 'select', protocol: 'prepared', clients: [16, 64] },
  { kind: 'select', protocol: 'simple', clients: [16] },
  { kind: 'write', protocol: 'prepared', clients: [16] },
  { kind: 'tpcb-branch', protocol: 'prepared', clients: [16] },
];

export const METRICS: Metric[] = [
  { key: 'tps', label: 'TPS', digits: 0 },
  { key: 'p50Ms', label: 'p50 ms', digits: 2 },
  { key: 'p99Ms', label: 'p99 ms', digits: 2 },
  { key: 'vsDirect', label: 'x direct', digits: 2 },
  { key: 'vsPgbouncer', label: 'x pgbouncer', digits: 2 },
  { key: 'cpuUsPerStmt', label: 'proxy CPU µs/stmt', digits: 1 },
  { key: 'cpuVsPipe', label: 'CPU x pipe', digits: 2 },
];
/** With --router-baseline: TPS over router-base's in the same round and workload. */
const VS_BASE: Metric = { key: 'vsBase', label: 'x router-base', digits: 3 };

/** The issue's targets for the router on this suite (docs/benchmarks.md shows them as checks). */
export const TARGETS_OF_ROUTER = {
  select64VsPgbouncer: 1.0,
  select64VsDirect: 0.6,
  tpcbVsDirect: 0.9,
  cpuUsPerStmt: 25,
  cpuVsPipe: 1.15,
} as const;

/**
 * The targets judged from the medians of a run: each one a check that says its numbers, met or
 * not. A check whose rows the run did not produce (other --clients or --targets) is left out.
 */
export function overheadChecks(
  summary: readonly SummaryRow[],
  comparison?: PairedComparison,
): CheckResult[] {
  const T = TARGETS_OF_ROUTER;
  const router = (group: string) => summary.find((r) => r.group === group && r.target === 'router');
  const f = (x: number | null | undefined, d = 2) => (typeof x === 'number' ? x.toFixed(d) : 'n/a');
  const checks: CheckResult[] = [];
  const select = router('select, 64 clients')?.values;
  if (select?.['vsPgbouncer'] != null && select['vsDirect'] != null) {
    checks.push({
      name: `select, 64 clients: router >= ${T.select64VsPgbouncer.toFixed(1)}x PgBouncer and >= ${T.select64VsDirect}x direct`,
      ok:
        select['vsPgbouncer'] >= T.select64VsPgbouncer && select['vsDirect'] >= T.select64VsDirect,
      detail: `${f(select['vsPgbouncer'])}x PgBouncer, ${f(select['vsDirect'])}x direct`,
    });
  }
  const tpcb = router('tpcb-branch, 16 clients')?.values;
  if (tpcb?.['vsDirect'] != null) {
    checks.push({
      name: `tpcb-branch, 16 clients: router >= ${T.tpcbVsDirect}x direct`,
      ok: tpcb['vsDirect'] >= T.tpcbVsDirect,
      detail: `${f(tpcb['vsDirect'])}x direct`,
    });
  }
  const cpu = summary.filter((r) => r.target === 'router' && r.values['cpuUsPerStmt'] != null);
  if (cpu.length > 0) {
    const within = (r: SummaryRow) =>
      r.values['cpuUsPerStmt']! <= T.cpuUsPerStmt &&
      (r.values['cpuVsPipe'] == null || r.values['cpuVsPipe'] <= T.cpuVsPipe);
    checks.push({
      name: `router CPU per statement <= ${T.cpuUsPerStmt} µs and <= ${T.cpuVsPipe}x the bare Node pipe's`,
      ok: cpu.every(within),
      detail: cpu
        .map((r) => {
          const pipe = r.values['cpuVsPipe'];
          return `${r.group} ${f(r.values['cpuUsPerStmt'], 1)} µs${pipe == null ? '' : `, ${f(pipe)}x`}`;
        })
        .join('; '),
    });
  }
  if (comparison && comparison.rows.length > 0) {
    const { target, reference, rows } = comparison;
    checks.push({
      name: `${target} >= ${MIN_VS_BASELINE}x ${reference} in every workload (median of the rounds' ratios)`,
      ok: rows.every((r) => r.median !== null && r.median >= MIN_VS_BASELINE),
      detail: rows.map((r) => `${r.group} ${f(r.median, 3)}x`).join('; '),
    });
  }
  return checks;
}

interface Workload {
  kind: WorkloadKind;
  protocol: PgbenchProtocol;
  clients: number;
  group: string;
}

/** A workload's name for --workloads: its kind, with `-simple` when not prepared. */
const workloadName = (p: { kind: WorkloadKind; protocol: PgbenchProtocol }): string =>
  p.protocol === 'prepared' ? p.kind : `${p.kind}-${p.protocol}`;

export function overheadWorkloads(clients?: number[], only?: readonly string[]): Workload[] {
  const unknown = only?.filter((n) => !PLAN.some((p) => workloadName(p) === n)) ?? [];
  if (unknown.length > 0)
    throw new UsageError(
      `--workloads: no workload ${unknown.join(', ')} (there are ${PLAN.map(workloadName).join(', ')})`,
    );
  const out: Workload[] = [];
  for (const p of PLAN) {
    if (only !== undefined && !only.includes(workloadName(p))) continue;
    for (const c of clients ?? p.clients) {
      // The prepared workloads keep their names (the checks and earlier results use them).
      const group = `${p.kind}${p.protocol === 'prepared' ? '' : ` -M ${p.protocol}`}, ${c} clients`;
      if (!out.some((w) => w.group === group)) {
        out.push({ kind: p.kind, protocol: p.protocol, clients: c, group });
      }
    }
  }
  return out;
}

function describe(w: Workload): string {
  const spec = WORKLOADS[w.kind];
  const text = spec.description.replace('-M prepared', `-M ${w.protocol}`);
  return `${text}; ${spec.statementsPerTxn} statement(s) per transaction`;
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const { opts } = ctx;
  const startedAt = new Date();
  const scale = opts.scale ?? DEFAULT_SCALE;
  const workloads = overheadWorkloads(opts.clients, opts.workloads);
  const maxClients = Math.max(...workloads.map((w) => w.clients));
  const node = await startPgbenchNode({
    name: 'bench-overhead',
    scale,
    opts,
    names: TARGETS,
    maxClients,
    poolSize: maxClients,
    routerPoolSize: ROUTER_POOL_SIZE,
    log: ctx.log,
  });
  try {
    const { pgSettings, targets: t } = node;
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
      const w = workloads.at(-1)!; // the heaviest script touches every table
      for (const target of t.running) await measure(spec(target, w, opts.warmupS));
    }
    const measurements: Measurement[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const order = roundOrder(t.running, round - 1);
      ctx.log(`round ${round}/${opts.rounds}: ${order.map((x) => x.name).join(', ')}`);
      for (const w of workloads) {
        for (const target of order) {
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
    const metrics = withBase ? [...METRICS, VS_BASE] : METRICS;
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
        ...(opts.routerPipelineDepth !== undefined
          ? { routerPipelineDepth: opts.routerPipelineDepth }
          : {}),
        ...(opts.routerBaseline !== undefined ? { routerBaseline: opts.routerBaseline } : {}),
        postgres: pgSettings,
      },
      targets: t.infos,
      groups: workloads.map((w) => ({ name: w.group, description: describe(w) })),
      metrics,
      chartMetric: 'tps',
      measurements,
      summary,
      notes: [
        'Ratios are taken within each round (same workload, same round), then the median over rounds.',
        'Proxy CPU is utime+stime of the proxy process (and its children) from /proc/<pid>/stat across the run, divided by transactions x statements per transaction.',
        "CPU x pipe is a proxy's CPU per statement over the bare Node pipe's, in the same round and workload.",
        'pgbench runs on the same machine and competes for its cores; every target pays that alike.',
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
  const head = `  ${group.padEnd(26)} ${target.padEnd(12)}`;
  if (error !== undefined && v['tps'] === undefined) return `${head} FAILED: ${error}`;
  return `${head} ${f(v['tps'], 0).padStart(8)} tps  p50 ${f(v['p50Ms'], 2)} ms  p99 ${f(v['p99Ms'], 2)} ms${cpu}${error ? `  (${error})` : ''}`;
}

export const overhead: Suite = {
  name: 'overhead',
  summary:
    'one node: direct vs router vs pgbouncer (session) vs a bare Node pipe (vs another build of the router with --router-baseline); TPS, latency, CPU/stmt',
  run,
};
