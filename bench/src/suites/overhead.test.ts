// The overhead suite's arithmetic: per-round ratios of any value (CPU to the pipe's as well as TPS
// to direct's) and the targets judged from the medians, met or not, numbers stated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize, type Measurement } from '../report/model.js';
import { addRatios } from '../report/ratios.js';
import { METRICS, overheadChecks } from './overhead.js';

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
