import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Measurement, Metric } from '../report/model.js';
import type { NodeName } from './failover-cluster.js';
import { failoverChecks, summarize, type Lost } from './failover-summary.js';

const METRICS: Metric[] = [
  { key: 'firstWriteMs', label: 'first write ms', digits: 0 },
  { key: 'held', label: 'held statements', digits: 0 },
  { key: 'lostWrites', label: 'acked lost', digits: 0 },
];
const TARGETS = ['direct writers', 'router writers'];

const m = (
  round: number,
  node: NodeName,
  target: string,
  firstWriteMs: number | null,
  held: number | null,
  error?: string,
): Measurement => ({
  round,
  group: `kill ${round}: ${node}`,
  target,
  values: { firstWriteMs, held, lostWrites: null },
  ...(error === undefined ? {} : { error }),
});

const rows = [
  m(1, 'data1', 'direct writers', 1_000, null),
  m(1, 'data1', 'router writers', 900, 4),
  m(2, 'home', 'direct writers', 3_000, null),
  m(2, 'home', 'router writers', 2_900, 0),
  m(3, 'data1', 'direct writers', 1_200, null),
  m(3, 'data1', 'router writers', 1_500, 2),
];
const lost = (direct: number | undefined, routed: number | undefined): Lost =>
  new Map([
    [
      'direct writers',
      new Map<NodeName, number | undefined>([
        ['home', 0],
        ['data1', direct],
      ]),
    ],
    [
      'router writers',
      new Map<NodeName, number | undefined>([
        ['home', 0],
        ['data1', routed],
      ]),
    ],
  ]);

test('p50 and max are per target and scope; a metric a target has no value for stays empty', () => {
  const s = summarize(rows, METRICS, TARGETS, lost(0, 1));
  const row = (group: string, target: string) =>
    s.find((r) => r.group === group && r.target === target)?.values;
  assert.deepEqual(row('p50 of 2 data1 kills', 'router writers'), {
    firstWriteMs: 1_200,
    held: 3,
    lostWrites: 1,
  });
  assert.deepEqual(row('max of 3 kills', 'direct writers'), {
    firstWriteMs: 3_000,
    held: null,
    lostWrites: 0,
  });
  assert.equal(row('max of 1 home kills', 'router writers')?.['held'], 0);
  assert.equal(row('p50 of 3 kills', 'router writers')?.['lostWrites'], 1);
  assert.equal(s.length, rows.length + 3 * 2 * 2);
});

test('a node whose writes could not be read back leaves its loss empty, never 0', () => {
  const s = summarize(rows, METRICS, TARGETS, lost(undefined, 0));
  const direct = s.filter((r) => r.target === 'direct writers' && r.group.includes(' of '));
  assert.deepEqual(
    direct.map((r) => [r.group, r.values['lostWrites']]),
    [
      ['p50 of 2 data1 kills', null],
      ['max of 2 data1 kills', null],
      ['p50 of 1 home kills', 0],
      ['max of 1 home kills', 0],
      ['p50 of 3 kills', null],
      ['max of 3 kills', null],
    ],
  );
  const [loss] = failoverChecks(rows, TARGETS, 3, lost(undefined, 0));
  assert.equal(loss?.ok, false);
  assert.match(loss?.detail ?? '', /unreadable: data1 \(direct writers\)/);
});

test('each target has its own time check; a lost write or a failed kill fails the checks', () => {
  const ok = failoverChecks(rows, TARGETS, 3, lost(0, 0));
  assert.deepEqual(
    ok.map((c) => [c.name, c.ok]),
    [
      ['no acknowledged write lost', true],
      ['writes flow again within 5 s (p50), 10 s at most: direct writers', true],
      ['writes flow again within 5 s (p50), 10 s at most: router writers', true],
    ],
  );
  assert.equal(failoverChecks(rows, TARGETS, 3, lost(0, 2))[0]?.ok, false);
  const stalled = [
    ...rows.slice(0, 5),
    m(3, 'data1', 'router writers', null, 9, 'not first write'),
  ];
  const c = failoverChecks(stalled, TARGETS, 3, lost(0, 0));
  assert.deepEqual(
    c.map((x) => x.ok),
    [true, true, false],
  );
  assert.match(c[2]!.detail, /over 2 of 3 kill\(s\)/);
  assert.equal(failoverChecks(rows.slice(0, 4), TARGETS, 3, lost(0, 0))[0]?.ok, false);
});
