// The whole check of one history: format, then each workload's checks and placement against the
// last final-state probe. Pure: a history in, counts and examples out.
import { checkBank, type BankStats } from './bank.js';
import { checkCounters, type CounterStats } from './counters.js';
import { lastFinalState } from './final-state.js';
import {
  ANOMALY_CLASSES,
  FRACTURED_KINDS,
  Findings,
  type AnomalyClass,
  type FracturedKind,
} from './findings.js';
import { pairOperations, parseHistoryText, type HistoryEvent } from './history.js';
import { checkLists, type ListStats } from './lists.js';
import { checkPlacement } from './placement.js';

export interface CheckResult {
  events: number;
  /** Client operations by outcome. */
  operations: { total: number; ok: number; fail: number; info: number };
  /** Operations by f and outcome. */
  byF: Record<string, { ok: number; fail: number; info: number }>;
  anomalies: Record<AnomalyClass, number>;
  examples: Partial<Record<AnomalyClass, string[]>>;
  fractured: Record<FracturedKind, number>;
  fracturedExamples: Partial<Record<FracturedKind, string[]>>;
  /** Sum of every anomaly class (fractured reads excluded). */
  anomalyTotal: number;
  finalProbe: number | undefined;
  lists: ListStats;
  counters: CounterStats;
  bank: BankStats;
  placedRows: number;
}

export function checkHistoryText(text: string): CheckResult {
  const { events, malformed } = parseHistoryText(text);
  return checkEvents(events, malformed);
}

export function checkEvents(
  events: readonly HistoryEvent[],
  parseErrors: readonly string[] = [],
): CheckResult {
  const out = new Findings();
  const h = pairOperations(events);
  for (const m of [...parseErrors, ...h.malformed]) out.add('history-malformed', m);
  const final = lastFinalState(h.meta);
  if (!final) out.add('final-state-missing', 'the history has no complete final-state probe');

  const lists = checkLists(h.ops, final, out);
  const counters = checkCounters(h.ops, final, out);
  const bank = checkBank(h.ops, h.meta, final, out);
  const placedRows = final ? checkPlacement(final, out).rows : 0;

  const operations = { total: h.ops.length, ok: 0, fail: 0, info: 0 };
  const byF: CheckResult['byF'] = {};
  for (const op of h.ops) {
    operations[op.status]++;
    const f = (byF[op.f] ??= { ok: 0, fail: 0, info: 0 });
    f[op.status]++;
  }
  const anomalies = Object.fromEntries(ANOMALY_CLASSES.map((c) => [c, out.count(c)])) as Record<
    AnomalyClass,
    number
  >;
  const fractured = Object.fromEntries(
    FRACTURED_KINDS.map((k) => [k, out.fractured.get(k) ?? 0]),
  ) as Record<FracturedKind, number>;
  return {
    events: events.length,
    operations,
    byF,
    anomalies,
    examples: Object.fromEntries(out.examples),
    fractured,
    fracturedExamples: Object.fromEntries(out.fracturedExamples),
    anomalyTotal: out.total(),
    finalProbe: final?.probe,
    lists,
    counters,
    bank,
    placedRows,
  };
}

/** One line: every anomaly class with its count, then fractured reads apart. */
export function anomalyLine(r: CheckResult): string {
  const classes = ANOMALY_CLASSES.map((c) => `${c}=${r.anomalies[c]}`).join(' ');
  const fractured = FRACTURED_KINDS.map((k) => `${k}=${r.fractured[k]}`).join(' ');
  return `anomalies ${r.anomalyTotal}: ${classes}; fractured reads (not failures): ${fractured}`;
}

/** What a person reads after `check`: the counts, and the examples of anything found. */
export function describeResult(r: CheckResult): string[] {
  const lines = [
    `${r.events} events, ${r.operations.total} operations: ${r.operations.ok} ok, ${r.operations.fail} fail, ${r.operations.info} info`,
    `lists: ${r.lists.keys} keys, ${r.lists.appends} appends, ${r.lists.reads} reads; counters: ${r.counters.adds} adds (${r.counters.settledCommitted} unknown settled committed, ${r.counters.settledAbsent} settled absent), ${r.counters.reads} reads; bank: ${r.bank.accounts} accounts, ${r.bank.transfers} transfers, ${r.bank.reads} reads; ${r.placedRows} rows placed`,
  ];
  for (const c of ANOMALY_CLASSES) {
    if (r.anomalies[c] === 0) continue;
    lines.push(`${c}: ${r.anomalies[c]}`);
    for (const ex of r.examples[c] ?? []) lines.push(`  ${ex}`);
  }
  for (const k of FRACTURED_KINDS) {
    if (r.fractured[k] === 0) continue;
    lines.push(`fractured ${k} reads: ${r.fractured[k]} (reported, not a failure)`);
    for (const ex of r.fracturedExamples[k] ?? []) lines.push(`  ${ex}`);
  }
  lines.push(anomalyLine(r));
  return lines;
}
