// The rebalance planner on numbers: moves when a range fits, splits when none does, drains
// leaving nodes first, and stops within tolerance.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { planRebalance, type RangeLoad } from './rebalance-plan.js';

const STEP = 2n ** 61n;
function ranges(owners: string[], rows: number[]): RangeLoad[] {
  return owners.map((owner, i) => ({
    keyspace: 'ks',
    lo: -(2n ** 63n) + BigInt(i) * STEP,
    hi: -(2n ** 63n) + BigInt(i + 1) * STEP - 1n,
    owner,
    rows: rows[i]!,
    buckets: Array.from({ length: 8 }, () => rows[i]! / 8),
  }));
}

function within(after: Record<string, number>, tolerance: number): boolean {
  const v = Object.values(after);
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  return v.every((x) => Math.abs(x - mean) <= tolerance * mean);
}

test('an already balanced keyspace needs nothing', () => {
  const p = planRebalance(ranges(['a', 'b', 'a', 'b'], [100, 100, 100, 100]), ['a', 'b'], {
    tolerance: 0.1,
  });
  assert.deepEqual(p.actions, []);
  assert.deepEqual(p.unbalanced, []);
});

test('a new empty node gets ranges moved to it, with a split when none fits', () => {
  const p = planRebalance(ranges(['a', 'b', 'a', 'b'], [100, 100, 100, 100]), ['a', 'b', 'c'], {
    tolerance: 0.1,
  });
  assert.ok(p.actions.some((x) => x.kind === 'move' && x.to === 'c'));
  assert.ok(
    p.actions.some((x) => x.kind === 'split'),
    JSON.stringify(p.actions, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
  );
  assert.ok(within(p.after['ks']!, 0.1), JSON.stringify(p.after));
  assert.deepEqual(p.unbalanced, []);
  // Every split comes before the move of its upper half.
  for (const [i, a] of p.actions.entries())
    if (a.kind === 'move') {
      const split = p.actions.findIndex((s) => s.kind === 'split' && s.at === a.lo);
      assert.ok(split < i);
    }
});

test('a drain moves every range off the leaving node and nothing else', () => {
  const p = planRebalance(ranges(['a', 'b', 'c', 'c'], [100, 120, 50, 60]), ['a', 'b'], {
    tolerance: 0.1,
    drainOnly: true,
  });
  assert.deepEqual(
    p.actions.map((x) => (x.kind === 'move' ? [x.from, x.to] : [])),
    [
      ['c', 'a'],
      ['c', 'b'],
    ],
  );
  assert.deepEqual(p.after['ks'], { a: 150, b: 180 });
});

test('a range that cannot be cut finer leaves the keyspace reported unbalanced', () => {
  const one: RangeLoad[] = [
    { keyspace: 'ks', lo: 5n, hi: 5n, owner: 'a', rows: 1000, buckets: [1000] },
  ];
  const p = planRebalance(one, ['a', 'b'], { tolerance: 0.1 });
  assert.deepEqual(p.unbalanced, ['ks']);
});
