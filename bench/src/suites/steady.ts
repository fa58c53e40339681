// Suite `steady`: whether a proxy's memory keeps growing under a steady load (the performance
// issue's target: after warm-up, 10 minutes of steady load grow the router's RSS by at most 2%).
// One Postgres with the pgbench tables, distributed by bid over a one-node catalog as in
// `overhead`; each target gets a warm-up, then one long run of the select and write scripts at
// once, while the VmRSS of its process tree is sampled every few seconds.
import { rssBytes } from '../harness/proc-stats.js';
import { rssDrift, sampleRss } from '../harness/rss-sampler.js';
import { roundOrder } from '../harness/stats.js';
import { measure, type MeasureSpec } from '../pgbench/measure.js';
import { WORKLOADS, workloadScript, type WorkloadKind } from '../pgbench/scripts.js';
import {
  formatValue,
  summarize,
  type CheckResult,
  type Measurement,
  type Metric,
  type SuiteResult,
  type TimeSeries,
} from '../report/model.js';
import type { Target } from '../targets/target.js';
import { progressLine } from './overhead.js';
import { startPgbenchNode } from './pgbench-targets.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const DEFAULT_SCALE = 10;
const DEFAULT_SELECT_CLIENTS = 16;
/** pgbouncer runs only when --targets names it: the question is the router's, the pipe its floor. */
const DEFAULT_TARGETS = ['router', 'passthrough'] as const;
const ALL_TARGETS = ['router', 'pgbouncer', 'passthrough'] as const;
/** The issue's target, over a run of TARGET_DURATION_S after warm-up. */
const MAX_GROWTH_PCT = 2;
const TARGET_DURATION_S = 600;
/** The start and end levels are medians over this much of the run (at most a tenth of it). */
const WINDOW_MS = 60_000;
/** Sampling interval: at most this, and at least 40 samples however short the run. */
const SAMPLE_MS = 5_000;
/** Latencies are logged for a sample of transactions as large as a full log of this many seconds. */
const FULL_LOG_S = 10;
const MB = 1024 * 1024;

const METRICS: Metric[] = [
  { key: 'tps', label: 'TPS', digits: 0 },
  { key: 'p99Ms', label: 'p99 ms', digits: 2 },
  { key: 'rssWarmMB', label: 'RSS after warm-up MB', digits: 1 },
  { key: 'rssEndMB', label: 'RSS at end MB', digits: 1 },
  { key: 'rssGrowthPct', label: 'RSS growth %', digits: 2 },
  { key: 'rssPeakMB', label: 'RSS max MB', digits: 1 },
];

/** The load: `select` at N clients and `write` at N/4 (at least 1), as two pgbench at once. */
function mix(selectClients: number): { kind: WorkloadKind; clients: number }[] {
  return [
    { kind: 'select', clients: selectClients },
    { kind: 'write', clients: Math.max(1, Math.round(selectClients / 4)) },
  ];
}

const mb = (bytes: number) => bytes / MB;
const f = (v: number | null | undefined, digits: number) => formatValue(v, digits);

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const { opts } = ctx;
  const startedAt = new Date();
  const scale = opts.scale ?? DEFAULT_SCALE;
  const load = mix(opts.clients?.[0] ?? DEFAULT_SELECT_CLIENTS);
  const clients = load.reduce((n, l) => n + l.clients, 0);
  const group = `${load.map((l) => `${l.kind} ${l.clients}`).join(' + ')} clients, ${opts.durationS} s`;
  const durationMs = opts.durationS * 1000;
  const sampleMs = Math.min(SAMPLE_MS, Math.max(50, durationMs / 40));
  const windowMs = Math.min(WINDOW_MS, durationMs / 10);
  const samplingRate = Math.min(1, FULL_LOG_S / opts.durationS);
  const node = await startPgbenchNode({
    name: 'bench-steady',
    scale,
    opts,
    names: opts.targets ? ALL_TARGETS : DEFAULT_TARGETS,
    maxClients: clients,
    poolSize: clients,
    log: ctx.log,
  });
  try {
    const { pgSettings, targets: t } = node;
    const perTarget = opts.warmupS + opts.rounds * opts.durationS;
    ctx.log(
      `${t.running.length} target(s), each ${opts.warmupS} s of warm-up and ${opts.rounds} x ${opts.durationS} s of steady load: about ${Math.ceil((t.running.length * perTarget) / 60)} min`,
    );
    const spec = (target: Target, durationS: number): MeasureSpec => ({
      legs: load.map((l) => ({
        host: target.host,
        port: target.port,
        script: workloadScript(l.kind, { from: 1, to: scale }),
        clients: l.clients,
        statementsPerTxn: WORKLOADS[l.kind].statementsPerTxn,
      })),
      pids: target.pid === undefined ? [] : [target.pid],
      durationS,
      threads: opts.threads,
      statementsPerTxn: WORKLOADS.select.statementsPerTxn,
      samplingRate,
    });
    const measurements: Measurement[] = [];
    const series: TimeSeries[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const order = roundOrder(t.running, round - 1);
      ctx.log(`round ${round}/${opts.rounds}: ${order.map((x) => x.name).join(', ')}`);
      for (const target of order) {
        if (target.pid === undefined) continue; // nothing to sample (never: direct is not run)
        const values: Record<string, number | null> = {};
        if (round === 1 && opts.warmupS > 0) {
          values['rssBeforeWarmupMB'] = mb(rssBytes(target.pid));
          const w = await measure(spec(target, opts.warmupS));
          ctx.log(
            `  ${target.name.padEnd(12)} warm-up ${opts.warmupS} s: ${f(w.values['tps'], 0)} tps, RSS ${f(values['rssBeforeWarmupMB'], 1)} -> ${f(mb(rssBytes(target.pid)), 1)} MB${w.error ? `  (${w.error})` : ''}`,
          );
        }
        const sampler = sampleRss(target.pid, sampleMs);
        const r = await measure(spec(target, opts.durationS));
        const rss = sampler.stop();
        // The first sample is taken before pgbench connects and the last after it has gone.
        const loaded = rss.series.length > 2 ? rss.series.slice(1, -1) : rss.series;
        const drift = rssDrift(loaded, windowMs);
        Object.assign(values, r.values, {
          rssWarmMB: drift ? mb(drift.startBytes) : null,
          rssEndMB: drift ? mb(drift.endBytes) : null,
          rssGrowthPct: drift?.growthPct ?? null,
          rssPeakMB: mb(Math.max(...loaded.map((s) => s.bytes))),
          rssAfterMB: mb(rss.endBytes),
          rssSamples: loaded.length,
        });
        measurements.push({ round, group, target: target.name, values, error: r.error });
        series.push({
          name: opts.rounds > 1 ? `${target.name}, round ${round}` : target.name,
          points: loaded.map((s) => [Math.round(s.atMs) / 1000, mb(s.bytes)]),
        });
        ctx.log(
          `${progressLine(group, target.name, r.values, r.error)}\n` +
            `    RSS ${f(values['rssWarmMB'], 1)} -> ${f(values['rssEndMB'], 1)} MB (${f(values['rssGrowthPct'], 2)}%), max ${f(values['rssPeakMB'], 1)} MB`,
        );
      }
    }
    const summary = summarize(measurements, METRICS);
    const checks = summary
      .filter((row) => row.target === 'router' && typeof row.values['rssGrowthPct'] === 'number')
      .map((row) => growthCheck(row.values, opts.durationS));
    const router = summary.find((row) => row.target === 'router');
    const warm = router?.values['rssWarmMB'];
    return {
      suite: 'steady',
      title: 'Tessera steady load: proxy memory over a long run',
      ...runStamp(ctx, startedAt, t.pgbouncerBin),
      settings: {
        rounds: opts.rounds,
        durationS: opts.durationS,
        warmupS: opts.warmupS,
        scale,
        clients: Object.fromEntries(load.map((l) => [l.kind, l.clients])),
        rssSampleMs: sampleMs,
        rssWindowMs: windowMs,
        latencySamplingRate: samplingRate,
        pgbenchThreads: opts.threads,
        routerPoolMode: opts.routerPoolMode,
        routerWorkers: opts.routerWorkers,
        proxyPoolSize: opts.routerPoolSize ?? clients,
        postgres: pgSettings,
      },
      targets: t.infos,
      groups: [
        {
          name: group,
          description:
            load
              .map((l) => `${l.clients} clients: ${WORKLOADS[l.kind].description}`)
              .join('; and at once, ') +
            `; ${opts.durationS} s after ${opts.warmupS} s of warm-up with the same load`,
        },
      ],
      metrics: METRICS,
      chartMetric: 'rssGrowthPct',
      timeline: {
        label: 'RSS MB',
        digits: 1,
        series,
        marks:
          typeof warm === 'number'
            ? [
                {
                  label: `router after warm-up +${MAX_GROWTH_PCT}%`,
                  value: warm * (1 + MAX_GROWTH_PCT / 100),
                },
              ]
            : undefined,
      },
      measurements,
      summary,
      notes: notes(checks, sampleMs, windowMs, samplingRate),
      baseline: 'passthrough',
      checks,
    };
  } finally {
    await node.stop();
  }
}

function growthCheck(v: Record<string, number | null>, durationS: number): CheckResult {
  const growth = v['rssGrowthPct']!;
  const short =
    durationS < TARGET_DURATION_S
      ? ` (a ${durationS} s run, not the target's ${TARGET_DURATION_S} s: indicative only)`
      : '';
  return {
    name: `router RSS grows at most ${MAX_GROWTH_PCT}% under steady load`,
    ok: growth <= MAX_GROWTH_PCT,
    detail: `${f(v['rssWarmMB'], 1)} MB after warm-up, ${f(v['rssEndMB'], 1)} MB at the end: ${growth >= 0 ? '+' : ''}${f(growth, 2)}%${short}`,
  };
}

function notes(
  checks: readonly CheckResult[],
  sampleMs: number,
  windowMs: number,
  samplingRate: number,
): string[] {
  const verdict = checks[0]
    ? `${checks[0].ok ? 'PASS' : 'FAIL'}: ${checks[0].detail}`
    : 'not judged: the router did not run';
  return [
    `Target (performance issue): a ${TARGET_DURATION_S / 60}-minute steady load after warm-up grows the router's RSS by at most ${MAX_GROWTH_PCT}%. This run: ${verdict}.`,
    `RSS is VmRSS from /proc/<pid>/status summed over the target's process tree, sampled every ${f(sampleMs / 1000, 2)} s while the load runs. "After warm-up" is the median of the samples in the first ${f(windowMs / 1000, 1)} s of the steady run, "at end" the median of the last ${f(windowMs / 1000, 1)} s (a minute, or a tenth of a shorter run), so one garbage collection at either edge does not decide the growth; max is the largest sample.`,
    'The passthrough target (a bare Node pipe) is the floor: what Node, its sockets and the kernel do under the same load with no routing at all.',
    `TPS is both pgbench processes' together over the whole run; p99 is over both scripts, from a ${samplingRate < 1 ? `${f(samplingRate * 100, 2)}% sample of transactions (pgbench --sampling-rate)` : 'log of every transaction'}.`,
    'pgbench runs on the same machine and competes for its cores: a busy machine moves TPS far more than it moves a leak.',
  ];
}

export const steady: Suite = {
  name: 'steady',
  summary: 'router (and Node pipe) RSS growth over a 10-minute steady pgbench load after warm-up',
  defaults: { rounds: 1, durationS: TARGET_DURATION_S, warmupS: 60 },
  run,
};
