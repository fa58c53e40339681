// The overhead suite's arithmetic: per-round ratios of any value (CPU to the pipe's as well as TPS
// to direct's, CPU on -M simple to CPU on -M prepared) and the issues' targets judged from the
// medians, met or not, numbers stated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize, type Measurement } from '../report/model.js';
import { checkLine, comparisonTable, markdownTable } from '../report/markdown.js';
import { addGroupRatios, addRatios, pairedComparison } from '../report/ratios.js';
import { METRICS, overheadChecks, overheadMetrics } from './overhead-checks.js';
import { overheadWorkloads, preparedCounterparts } from './overhead-workloads.js';

function m(round: number, group: string, target: string, tps: number, cpu?: number): Measurement {
  return { round, group, target, values: cpu === undefined ? { tps } : { tps, cpuUsPerStmt: cpu } };
}

test('ratios are taken within a round, of TPS or of another value', () => {
  const ms = [
    m(1, 'g', 'router', 100, 22),
    m(1, 'g', 'passthrough', 90, 20),
    m(2, 'g', 'router', 100, 30),
    m(2, 'g', 'passthrough', 100, 20),
  ];
  addRatios(ms, 'passthrough', 'cpuVsPipe', 'cpuUsPerStmt');
  addRatios(ms, 'passthrough', 'vsPipe');
  assert.deepEqual(
    ms.map((x) => [x.values['cpuVsPipe'], x.values['vsPipe']]),
    [
      [1.1, 100 / 90],
      [1, 1],
      [1.5, 1],
      [1, 1],
    ],
  );
});

test('the targets are judged from the medians and say their numbers', () => {
  const ms: Measurement[] = [];
  for (const round of [1, 2, 3]) {
    ms.push(
      m(round, 'select, 64 clients', 'direct', 1000),
      m(round, 'select, 64 clients', 'pgbouncer', 600, 12),
      m(round, 'select, 64 clients', 'passthrough', 500, 17),
      m(round, 'select, 64 clients', 'router', 700, 12),
      m(round, 'tpcb-branch, 16 clients', 'direct', 100),
      m(round, 'tpcb-branch, 16 clients', 'pgbouncer', 60, 13),
      m(round, 'tpcb-branch, 16 clients', 'passthrough', 50, 20),
      // One bad round: the median keeps the router within 1.15x of the pipe.
      m(round, 'tpcb-branch, 16 clients', 'router', 48, round === 3 ? 26 : 22),
    );
  }
  addRatios(ms, 'direct', 'vsDirect');
  addRatios(ms, 'pgbouncer', 'vsPgbouncer');
  addRatios(ms, 'passthrough', 'cpuVsPipe', 'cpuUsPerStmt');
  const checks = overheadChecks(summarize(ms, METRICS));
  assert.deepEqual(
    checks.map((c) => [c.ok, c.detail]),
    [
      [true, '1.17x PgBouncer, 0.70x direct'],
      [false, '0.48x direct'],
      [true, 'select, 64 clients 12.0 µs, 0.71x; tpcb-branch, 16 clients 22.0 µs, 1.10x'],
    ],
  );
  // Without the rows a check needs (other --targets), it is left out rather than failed.
  const routerOnly = ms
    .filter((x) => x.target === 'router')
    .map((x) => m(x.round, x.group, x.target, x.values['tps']!, x.values['cpuUsPerStmt']!));
  assert.deepEqual(
    overheadChecks(summarize(routerOnly, METRICS)).map((c) => c.name),
    ["router CPU per statement <= 25 µs and <= 1.15x the bare Node pipe's"],
  );
});

test('the router is compared with its baseline round by round, and judged by the median ratio', () => {
  const ms = [
    m(1, 'select, 16 clients', 'router', 980),
    m(1, 'select, 16 clients', 'router-base', 1000),
    m(2, 'select, 16 clients', 'router', 500), // a round hit by noise: both targets slower
    m(2, 'select, 16 clients', 'router-base', 520),
    m(3, 'select, 16 clients', 'router', 1010),
    m(3, 'select, 16 clients', 'router-base', 1000),
    m(1, 'write, 16 clients', 'router', 90),
    m(1, 'write, 16 clients', 'router-base', 100),
    { ...m(2, 'write, 16 clients', 'router', 0), values: {}, error: 'pgbench failed' },
    m(2, 'write, 16 clients', 'router-base', 100),
    m(3, 'write, 16 clients', 'router', 92),
    m(3, 'write, 16 clients', 'router-base', 100),
  ];
  const c = pairedComparison(ms, 'router', 'router-base');
  assert.deepEqual(
    c.rows.map((r) => [r.group, r.values, r.ratios.map((x) => x?.toFixed(3) ?? null)]),
    [
      ['select, 16 clients', [980, 500, 1010], ['0.980', '0.962', '1.010']],
      ['write, 16 clients', [90, null, 92], ['0.900', null, '0.920']],
    ],
  );
  assert.equal(c.rows[1]!.median, 0.91);
  const [check] = overheadChecks([], c);
  assert.deepEqual(
    [check!.ok, check!.detail],
    [false, 'select, 16 clients 0.980x; write, 16 clients 0.910x'],
  );
  assert.match(comparisonTable(c), /\| write, 16 clients \| 90 \/ – \/ 92 \| 100 \/ 100 \/ 100 \|/);
  // Without a baseline in the run there is no such check.
  assert.deepEqual(overheadChecks([]), []);
});

test('the CPU check leaves out the pipe ratio when the pipe did not run', () => {
  const ms = [m(1, 'select, 16 clients', 'router', 100, 12)];
  assert.deepEqual(
    overheadChecks(summarize(ms, METRICS)).map((c) => c.detail),
    ['select, 16 clients 12.0 µs'],
  );
});

test('the optional columns sit next to their kin, and the existing ones keep their order', () => {
  const labels = (has: Parameters<typeof overheadMetrics>[0]) =>
    overheadMetrics(has).map((x) => x.label);
  assert.deepEqual(
    labels({ base: false, pgbouncerTxn: false, cpuVsPrepared: false }),
    METRICS.map((x) => x.label),
  );
  assert.deepEqual(labels({ base: true, pgbouncerTxn: true, cpuVsPrepared: true }), [
    'TPS',
    'p50 ms',
    'p99 ms',
    'x direct',
    'x pgbouncer',
    'x pgbouncer-txn',
    'proxy CPU µs/stmt',
    'CPU x pipe',
    'CPU x prepared',
    'x router-base',
  ]);
});

/** Issue 15's comparison: select and select -M simple at 64 clients, router and pgbouncer-txn. */
function simpleRun(routerTps: number[], routerCpu: { prepared: number[]; simple: number[] }) {
  const SELECT = 'select, 64 clients';
  const SIMPLE = 'select -M simple, 64 clients';
  const ms: Measurement[] = [];
  const txnTps = [1000, 500, 1050];
  for (const [i, round] of [1, 2, 3].entries()) {
    ms.push(
      m(round, SELECT, 'router', 900, routerCpu.prepared[i]),
      m(round, SIMPLE, 'router', routerTps[i]!, routerCpu.simple[i]),
      m(round, SIMPLE, 'pgbouncer-txn', txnTps[i]!, 25),
    );
  }
  addRatios(ms, 'pgbouncer-txn', 'vsPgbouncerTxn');
  const twins = preparedCounterparts(overheadWorkloads([64], ['select', 'select-simple']));
  addGroupRatios(ms, twins, 'cpuVsPrepared', 'cpuUsPerStmt');
  const metrics = overheadMetrics({ base: false, pgbouncerTxn: true, cpuVsPrepared: true });
  const summary = summarize(ms, metrics);
  const checks = overheadChecks(summary).filter((c) => c.name.startsWith(SIMPLE));
  return { metrics, summary, checks };
}

test('-M simple at 64 clients: router over pgbouncer-txn and CPU over its prepared CPU, per round then the median', () => {
  // Ratios 1.10, 1.04, 0.95 -> 1.04; CPU 28/20, 60/40, 32/20 = 1.4, 1.5, 1.6 -> 1.5 (the
  // medians' ratio, 32/20 = 1.6, would blame the router for the noisy round 2).
  const met = simpleRun([1100, 520, 1000], { prepared: [20, 40, 20], simple: [28, 60, 32] });
  assert.deepEqual(met.checks.map(checkLine), [
    'OK: select -M simple, 64 clients: router >= 1.0x PgBouncer in transaction mode: 1.040x pgbouncer-txn',
    'OK: select -M simple, 64 clients: router CPU per statement <= 1.5x its CPU per prepared statement (select, 64 clients): 1.500x (medians 32.0 µs simple, 20.0 µs prepared)',
  ]);
  const table = markdownTable(met).split('\n');
  assert.equal(
    table[0],
    '| workload | target | TPS | p50 ms | p99 ms | x direct | x pgbouncer | x pgbouncer-txn | proxy CPU µs/stmt | CPU x pipe | CPU x prepared |',
  );
  assert.deepEqual(table.slice(2), [
    '| select, 64 clients | router | 900 | – | – | – | – | – | 20.0 | – | – |',
    '| select -M simple, 64 clients | router | 1,000 | – | – | – | – | 1.040 | 32.0 | – | 1.500 |',
    '| select -M simple, 64 clients | pgbouncer-txn | 1,000 | – | – | – | – | 1.000 | 25.0 | – | – |',
  ]);

  const missed = simpleRun([980, 490, 1000], { prepared: [20, 20, 20], simple: [31, 32, 30] });
  assert.deepEqual(
    missed.checks.map((c) => [c.ok, c.detail]),
    [
      [false, '0.980x pgbouncer-txn'],
      [false, '1.550x (medians 31.0 µs simple, 20.0 µs prepared)'],
    ],
  );
});

test('without pgbouncer-txn or the prepared select in the run, those checks are left out', () => {
  const ms = [m(1, 'select -M simple, 64 clients', 'router', 1000, 30)];
  addRatios(ms, 'pgbouncer-txn', 'vsPgbouncerTxn');
  addGroupRatios(ms, new Map(), 'cpuVsPrepared', 'cpuUsPerStmt');
  const metrics = overheadMetrics({ base: false, pgbouncerTxn: true, cpuVsPrepared: true });
  assert.deepEqual(
    overheadChecks(summarize(ms, metrics)).map((c) => c.name),
    ["router CPU per statement <= 25 µs and <= 1.15x the bare Node pipe's"],
  );
});
