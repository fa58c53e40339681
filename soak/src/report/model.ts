// Everything a soak run reports (soak/results/<date>-<plan>.json), and its last line.
import type { CheckResult } from '../checker/check.js';
import { ANOMALY_CLASSES, FRACTURED_KINDS } from '../checker/findings.js';
import type { GrowthRule, RssSummary } from './growth.js';
import type { RssSample } from './rss.js';
import type { LatencyBucket, SecondCounts } from './timeline.js';

export interface FaultReport {
  id: number;
  kind: string;
  target: string;
  params: Record<string, unknown>;
  /** Seconds since the history began. */
  startS: number;
  endS: number | undefined;
  plannedSeconds: number;
  recoveryS: number | undefined;
  afterHealS: number | undefined;
  details: Record<string, unknown>;
  error: string | undefined;
}

export interface SoakReport {
  plan: string;
  description: string;
  seed: number;
  plannedSeconds: number;
  startedAt: string;
  loadSeconds: number;
  command: string;
  network: { use: string; reason: string };
  cluster: { nodes: string[]; coordinators: string[]; routers: string[] };
  workload: { rate: number; clients: number };
  history: string;
  operations: { total: number; ok: number; fail: number; info: number };
  byKind: Record<string, { ok: number; fail: number; info: number }>;
  faults: FaultReport[];
  faultsByKind: Record<string, number>;
  /** Cutovers that completed: moves whose job ended DONE (a split-merge makes two). */
  cutovers: number;
  skippedKinds: { kind: string; reason: string }[];
  /** Kinds the plan names that never ran (the run was too short for them). */
  kindsNotRun: string[];
  check: CheckResult;
  throughput: SecondCounts[];
  latency: LatencyBucket[];
  rss: { samples: RssSample[]; rule: GrowthRule; summary: RssSummary[] };
  unexpectedExits: { name: string; atS: number; code: number | null; signal: string | null }[];
  lastLine: string;
}

/** The cutovers the faults' details count (faults/mover.ts). */
export function cutoversOf(faults: readonly FaultReport[]): number {
  return faults.reduce(
    (n, f) => n + (typeof f.details.cutovers === 'number' ? f.details.cutovers : 0),
    0,
  );
}

export function lastLine(r: Omit<SoakReport, 'lastLine'>): string {
  const o = r.check.operations;
  const faults = Object.entries(r.faultsByKind)
    .map(([k, n]) => `${k}=${n}`)
    .join(' ');
  const classes = ANOMALY_CLASSES.map((c) => `${c}=${r.check.anomalies[c]}`).join(' ');
  const fractured = FRACTURED_KINDS.map((k) => `${k}=${r.check.fractured[k]}`).join(' ');
  return (
    `soak ${r.plan} seed ${r.seed}: ${o.total} operations (ok ${o.ok}, fail ${o.fail}, info ${o.info}) in ${Math.round(r.loadSeconds)} s (${Math.round(o.total / Math.max(1, r.loadSeconds))} ops/s); ` +
    `${r.faults.length} faults of ${Object.keys(r.faultsByKind).length} kinds (${faults}), ${r.cutovers} cutovers; ` +
    `anomalies ${r.check.anomalyTotal} (${classes}); fractured reads, not failures: ${fractured}`
  );
}
