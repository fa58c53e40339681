// The overhead suite's arithmetic: per-round ratios of any value (CPU to the pipe's as well as TPS
// to direct's) and the targets judged from the medians, met or not, numbers stated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize, type Measurement } from '../report/model.js';
import { comparisonTable } from '../report/markdown.js';
import { addRatios, pairedComparison } from '../report/ratios.js';
import { METRICS, overheadChecks } from './overhead-checks.js';

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
