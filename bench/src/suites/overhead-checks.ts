// The overhead suite's table columns and the issue's targets for the router, judged from the
// medians of a run: each one a check that says its numbers, met or not.
import type { CheckResult, Metric, PairedComparison, SummaryRow } from '../report/model.js';

/** The router must not fall further below its baseline than this, in any workload. */
export const MIN_VS_BASELINE = 0.95;

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
export const VS_BASE: Metric = { key: 'vsBase', label: 'x router-base', digits: 3 };
/** With pgbouncer-txn: TPS over PgBouncer's in transaction mode in the same round and workload. */
export const VS_PGBOUNCER_TXN: Metric = {
  key: 'vsPgbouncerTxn',
  label: 'x pgbouncer-txn',
  digits: 3,
};
/**
 * On a -M simple workload whose prepared twin (same kind, same clients) ran too: a proxy's CPU
 * per statement over its own CPU per statement there, in the same round.
 */
export const CPU_VS_PREPARED: Metric = {
  key: 'cpuVsPrepared',
  label: 'CPU x prepared',
  digits: 3,
};

/**
 * The table's columns: the suite's own, with the optional ones next to their kin (x pgbouncer-txn
 * after x pgbouncer, CPU x prepared after CPU x pipe) and x router-base last.
 */
export function overheadMetrics(has: {
  base: boolean;
  pgbouncerTxn: boolean;
  cpuVsPrepared: boolean;
}): Metric[] {
  return [
    ...METRICS.flatMap((m) => {
      if (m.key === 'vsPgbouncer' && has.pgbouncerTxn) return [m, VS_PGBOUNCER_TXN];
      if (m.key === 'cpuVsPipe' && has.cpuVsPrepared) return [m, CPU_VS_PREPARED];
      return [m];
    }),
    ...(has.base ? [VS_BASE] : []),
  ];
}

/** The issue's targets for the router on this suite (docs/benchmarks.md shows them as checks). */
export const TARGETS_OF_ROUTER = {
  select64VsPgbouncer: 1.0,
  select64VsDirect: 0.6,
  tpcbVsDirect: 0.9,
  cpuUsPerStmt: 25,
  cpuVsPipe: 1.15,
  /** Issue 15: -S -M simple at 64 clients, TPS over PgBouncer's in transaction mode. */
  simple64VsPgbouncerTxn: 1.0,
  /** Issue 15: CPU per simple statement over CPU per prepared statement, -S at 64 clients. */
  simple64CpuVsPrepared: 1.5,
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
  checks.push(...simpleChecks(summary));
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

/**
 * Issue 15's targets for the simple protocol at 64 clients: the router at least as fast as
 * PgBouncer in transaction mode, and its CPU per simple statement at most 1.5x its CPU per
 * prepared statement; both ratios taken within each round, then their median.
 */
function simpleChecks(summary: readonly SummaryRow[]): CheckResult[] {
  const T = TARGETS_OF_ROUTER;
  const row = (group: string) => summary.find((r) => r.group === group && r.target === 'router');
  const simple = row('select -M simple, 64 clients')?.values;
  const prepared = row('select, 64 clients')?.values;
  const f = (x: number | null | undefined, d: number) =>
    typeof x === 'number' ? x.toFixed(d) : 'n/a';
  const checks: CheckResult[] = [];
  const vsTxn = simple?.['vsPgbouncerTxn'];
  if (typeof vsTxn === 'number') {
    checks.push({
      name: `select -M simple, 64 clients: router >= ${T.simple64VsPgbouncerTxn.toFixed(1)}x PgBouncer in transaction mode`,
      ok: vsTxn >= T.simple64VsPgbouncerTxn,
      detail: `${f(vsTxn, 3)}x pgbouncer-txn`,
    });
  }
  const cpuRatio = simple?.['cpuVsPrepared'];
  if (typeof cpuRatio === 'number') {
    checks.push({
      name: `select -M simple, 64 clients: router CPU per statement <= ${T.simple64CpuVsPrepared.toFixed(1)}x its CPU per prepared statement (select, 64 clients)`,
      ok: cpuRatio <= T.simple64CpuVsPrepared,
      detail: `${f(cpuRatio, 3)}x (medians ${f(simple?.['cpuUsPerStmt'], 1)} µs simple, ${f(prepared?.['cpuUsPerStmt'], 1)} µs prepared)`,
    });
  }
  return checks;
}
