// Ratios across workloads: a target's value over its own in a twin workload of the same round.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Measurement } from './model.js';
import { addGroupRatios } from './ratios.js';

const cpu = (round: number, group: string, target: string, us: number): Measurement => ({
  round,
  group,
  target,
  values: { tps: 1000, cpuUsPerStmt: us },
});

test("a target's value is divided by its own in the twin workload of the same round", () => {
  const twins = new Map([['simple', 'prepared']]);
  const ms = [
    cpu(1, 'prepared', 'router', 20),
    cpu(1, 'prepared', 'pgbouncer', 10),
    cpu(1, 'simple', 'router', 30),
    cpu(1, 'simple', 'pgbouncer', 12),
    cpu(2, 'prepared', 'router', 40), // a noisy round: both workloads slower, the ratio holds
    cpu(2, 'simple', 'router', 60),
    cpu(2, 'simple', 'pgbouncer-txn', 11), // no prepared run of its own
  ];
  addGroupRatios(ms, twins, 'cpuVsPrepared', 'cpuUsPerStmt');
  assert.deepEqual(
    ms.map((m) => [m.round, m.group, m.target, m.values['cpuVsPrepared']]),
    [
      [1, 'prepared', 'router', null],
      [1, 'prepared', 'pgbouncer', null],
      [1, 'simple', 'router', 1.5],
      [1, 'simple', 'pgbouncer', 1.2],
      [2, 'prepared', 'router', null],
      [2, 'simple', 'router', 1.5],
      [2, 'simple', 'pgbouncer-txn', null],
    ],
  );
});

test('a failed or empty reference run gives no ratio, never a division by it', () => {
  const twins = new Map([['simple', 'prepared']]);
  const ms: Measurement[] = [
    { ...cpu(1, 'prepared', 'router', 20), error: 'pgbench failed' },
    cpu(1, 'simple', 'router', 30),
    { round: 2, group: 'prepared', target: 'router', values: { cpuUsPerStmt: null } },
    cpu(2, 'simple', 'router', 30),
    cpu(3, 'prepared', 'router', 0),
    cpu(3, 'simple', 'router', 30),
  ];
  addGroupRatios(ms, twins, 'cpuVsPrepared', 'cpuUsPerStmt');
  assert.deepEqual(
    ms.filter((m) => m.group === 'simple').map((m) => m.values['cpuVsPrepared']),
    [null, null, null],
  );
});
