// The shape of a suite's result, shared by every suite and every writer: raw per-round
// measurements, their medians per (group, target), and what the numbers were measured on.
import type { MachineInfo } from '../harness/machine.js';
import { median } from '../harness/stats.js';

export interface Metric {
  key: string;
  label: string;
  /** Decimal places in tables. */
  digits: number;
}

/** One run of one target in one round: e.g. workload "select, 64 clients", target "router". */
export interface Measurement {
  round: number;
  group: string;
  target: string;
  values: Record<string, number | null>;
  error?: string | undefined;
}

export interface SummaryRow {
  group: string;
  target: string;
  /** Medians over the rounds that produced a value. */
  values: Record<string, number | null>;
  /** Rounds that produced a measurement without error. */
  okRounds: number;
  errors: string[];
}

export interface TargetInfo {
  name: string;
  detail?: string | undefined;
  /** Why it did not run, when it did not. */
  skipped?: string | undefined;
  /** The workloads (groups) it ran without, and why, when it ran only some. */
  sitsOut?: { groups: string[]; reason: string } | undefined;
}

/** A check a suite makes after measuring (e.g. money is neither lost nor made by transfers). */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

/** A value over time during one run (e.g. a proxy's RSS), drawn as a line. */
export interface TimeSeries {
  /** The line's label: the target (and the round, when there are several). */
  name: string;
  /** [seconds since the run started, value], in time order. */
  points: [number, number][];
}

/** What a suite charts over time instead of bars of one metric. */
export interface Timeline {
  /** The values' name and unit, e.g. "RSS MB". */
  label: string;
  /** Decimal places on the axis. */
  digits: number;
  series: TimeSeries[];
  /** Horizontal reference lines, e.g. a target's limit. */
  marks?: { label: string; value: number }[] | undefined;
  /** Vertical lines at moments of the run (a phase starting), seconds since it started. */
  events?: { label: string; atS: number }[] | undefined;
}

/** One workload of a paired comparison: a value per round of each target, and their ratios. */
export interface PairedRow {
  group: string;
  /** Index i is round i+1; null where that round has no number. */
  values: (number | null)[];
  referenceValues: (number | null)[];
  ratios: (number | null)[];
  /** Median of the rounds' ratios. */
  median: number | null;
}

/** A target against a reference measured in the same rounds (overhead's router vs router-base). */
export interface PairedComparison {
  target: string;
  reference: string;
  /** The metric compared, e.g. tps. */
  metric: string;
  rows: PairedRow[];
}

export interface SuiteResult {
  suite: string;
  title: string;
  /** YYYY-MM-DD, the files' prefix. */
  date: string;
  startedAt: string;
  finishedAt: string;
  command: string;
  machine: MachineInfo;
  settings: Record<string, unknown>;
  targets: TargetInfo[];
  groups: { name: string; description: string }[];
  metrics: Metric[];
  /** The metric the chart shows, one bar per (group, target). */
  chartMetric: string;
  /** When present, the chart is this line chart over time instead (steady). */
  timeline?: Timeline | undefined;
  measurements: Measurement[];
  summary: SummaryRow[];
  notes: string[];
  /** The target every other is compared with (default `direct`): a run without it measured nothing. */
  baseline?: string | undefined;
  checks?: CheckResult[] | undefined;
  /** Side-by-side per-round numbers of two targets (overhead with --router-baseline). */
  comparison?: PairedComparison | undefined;
  /** Lines to paste into docs/capacity.md (overhead suite). */
  capacity?: string[] | undefined;
}

/** Medians per (group, target), in the order groups and targets were first measured. */
export function summarize(
  measurements: readonly Measurement[],
  metrics: readonly Metric[],
): SummaryRow[] {
  const rows = new Map<string, { group: string; target: string; runs: Measurement[] }>();
  for (const m of measurements) {
    const key = `${m.group}\u0000${m.target}`;
    const row = rows.get(key) ?? { group: m.group, target: m.target, runs: [] };
    row.runs.push(m);
    rows.set(key, row);
  }
  return [...rows.values()].map(({ group, target, runs }) => {
    const ok = runs.filter((r) => r.error === undefined);
    const values: Record<string, number | null> = {};
    for (const metric of metrics) values[metric.key] = median(ok.map((r) => r.values[metric.key]));
    return {
      group,
      target,
      values,
      okRounds: ok.length,
      errors: runs.flatMap((r) => (r.error === undefined ? [] : [`round ${r.round}: ${r.error}`])),
    };
  });
}

/** YYYY-MM-DD in local time. */
export function isoDate(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

export function formatValue(v: number | null | undefined, digits: number): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}
