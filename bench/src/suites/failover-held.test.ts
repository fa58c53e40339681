import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heldBetween, parseHoldCounters } from './failover-held.js';

const metrics = (held: Record<string, number>, count: number, sum: number): string =>
  [
    '# HELP tessera_router_held_statements_total Statements held for a later catalog epoch',
    '# TYPE tessera_router_held_statements_total counter',
    ...Object.entries(held).map(
      ([r, n]) => `tessera_router_held_statements_total{reason="${r}"} ${n}`,
    ),
    '# TYPE tessera_router_hold_seconds histogram',
    `tessera_router_hold_seconds_bucket{le="0.01"} 0`,
    `tessera_router_hold_seconds_bucket{le="+Inf"} ${count}`,
    `tessera_router_hold_seconds_sum ${sum}`,
    `tessera_router_hold_seconds_count ${count}`,
    'tessera_router_held_statements_totalx 99',
    'tessera_router_pool_waits_total{node="data1"} 7',
    '',
  ].join('\n');

test('the hold counters are read from a /metrics text; other metrics and comments are ignored', () => {
  assert.deepEqual(parseHoldCounters(metrics({ node: 3, lease: 1 }, 4, 2.5)), {
    count: 4,
    sumSeconds: 2.5,
    byReason: { node: 3, lease: 1 },
  });
});

test('a router that has held nothing yet has no hold samples: all zero, not an error', () => {
  assert.deepEqual(parseHoldCounters('# TYPE x counter\nx 1\n'), {
    count: 0,
    sumSeconds: 0,
    byReason: {},
  });
});

test('what was held during a kill is the difference of two readings, with the mean wait', () => {
  const before = parseHoldCounters(metrics({ node: 3 }, 3, 1.5));
  const after = parseHoldCounters(metrics({ node: 7, lease: 2 }, 9, 7.5));
  assert.deepEqual(heldBetween(before, after), {
    held: 6,
    meanWaitMs: 1_000,
    byReason: { node: 4, lease: 2 },
  });
  assert.deepEqual(heldBetween(after, after), { held: 0, meanWaitMs: null, byReason: {} });
});
