import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from './rng.js';

test('the same seed gives the same stream; forks are independent and stable', () => {
  const a = new Rng(5);
  const b = new Rng(5);
  const xs = Array.from({ length: 5 }, () => a.next());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b.next()),
  );
  assert.notDeepEqual(
    xs,
    Array.from({ length: 5 }, () => new Rng(6).next()),
  );
  assert.equal(new Rng(1).fork('faults').next(), new Rng(1).fork('faults').next());
  assert.notEqual(new Rng(1).fork('faults').next(), new Rng(1).fork('workload').next());
});

test('ints stay in range and weights are respected', () => {
  const r = new Rng(9);
  const counts = [0, 0, 0];
  for (let i = 0; i < 3000; i++) {
    const x = r.int(2, 4);
    assert.ok(x >= 2 && x <= 4);
    counts[r.weighted([1, 0, 3])]!++;
  }
  assert.equal(counts[1], 0);
  assert.ok(counts[2]! > counts[0]! * 2);
});
