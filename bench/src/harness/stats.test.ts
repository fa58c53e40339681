import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median, quantileSorted, roundOrder } from './stats.js';

test('rounds rotate the order of targets', () => {
  const t = ['A', 'B', 'C', 'D'];
  assert.deepEqual(roundOrder(t, 0), ['A', 'B', 'C', 'D']);
  assert.deepEqual(roundOrder(t, 1), ['B', 'C', 'D', 'A']);
  assert.deepEqual(roundOrder(t, 5), ['B', 'C', 'D', 'A']);
});

test('nearest-rank quantiles and medians that skip failed rounds', () => {
  const v = Float64Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(quantileSorted(v, 0.5), 50);
  assert.equal(quantileSorted(v, 0.99), 99);
  assert.equal(quantileSorted(v, 1), 100);
  assert.equal(median([3, null, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([null, undefined]), null);
});
