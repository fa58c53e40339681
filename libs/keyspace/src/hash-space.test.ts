// evenRanges and midpoint: exact cover of the int8 hash space, sizes within one of each other.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { evenRanges, HASH_MAX, HASH_MIN, midpoint, validateRanges } from './index.js';

test('the hash space is the int8 range', () => {
  assert.equal(HASH_MIN, -9223372036854775808n);
  assert.equal(HASH_MAX, 9223372036854775807n);
});

test('evenRanges(1) and evenRanges(2) are the whole space and its two signed halves', () => {
  assert.deepEqual(evenRanges(1), [{ lo: HASH_MIN, hi: HASH_MAX }]);
  assert.deepEqual(evenRanges(2), [
    { lo: HASH_MIN, hi: -1n },
    { lo: 0n, hi: HASH_MAX },
  ]);
  assert.deepEqual(
    evenRanges(4).map((r) => r.lo),
    [HASH_MIN, -(2n ** 62n), 0n, 2n ** 62n],
  );
});

test('evenRanges(n) covers the space exactly once with sizes differing by at most one', () => {
  for (const n of [...Array.from({ length: 40 }, (_, i) => i + 1), 97, 1000, 4096]) {
    const ranges = evenRanges(n);
    assert.equal(ranges.length, n);
    validateRanges(`even${n}`, ranges);
    const sizes = ranges.map((r) => r.hi - r.lo + 1n);
    const min = sizes.reduce((a, b) => (a < b ? a : b));
    const max = sizes.reduce((a, b) => (a > b ? a : b));
    assert.ok(max - min <= 1n, `n=${n}`);
    assert.equal(
      sizes.reduce((a, b) => a + b),
      2n ** 64n,
    );
  }
});

test('evenRanges refuses a count that is not a whole number >= 1', () => {
  for (const n of [0, -1, 1.5, NaN, Infinity]) assert.throws(() => evenRanges(n), RangeError);
});

test('midpoint splits into two non-empty halves differing in size by at most one', () => {
  assert.equal(midpoint(HASH_MIN, HASH_MAX), -1n);
  assert.equal(midpoint(0n, 1n), 0n);
  assert.equal(midpoint(0n, 2n), 1n);
  assert.equal(midpoint(-3n, -1n), -2n);
  assert.equal(midpoint(-2n, 1n), -1n);
  assert.equal(midpoint(5n, 5n), 5n);
  assert.equal(midpoint(HASH_MAX - 1n, HASH_MAX), HASH_MAX - 1n);
  assert.equal(midpoint(HASH_MIN, HASH_MIN + 1n), HASH_MIN);
  for (const [lo, hi] of [
    [HASH_MIN, 0n],
    [-7n, 8n],
    [-8n, 8n],
    [1n, 1000n],
    [HASH_MIN, HASH_MIN + 2n],
  ] as const) {
    const m = midpoint(lo, hi);
    const lower = m - lo + 1n;
    const upper = hi - m;
    assert.ok(
      lower >= 1n && upper >= 1n && lower - upper >= 0n && lower - upper <= 1n,
      `[${lo}, ${hi}]`,
    );
  }
  assert.throws(() => midpoint(2n, 1n), RangeError);
});
