import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseOptions } from './options.js';

test("a suite's defaults apply when the flags are absent, and give way to the flags and to --quick", () => {
  const steady = { rounds: 1, durationS: 600, warmupS: 60 };
  const shared = parseOptions([], 2);
  assert.deepEqual([shared.rounds, shared.durationS, shared.warmupS], [3, 10, 5]);
  const own = parseOptions([], 2, steady);
  assert.deepEqual([own.rounds, own.durationS, own.warmupS], [1, 600, 60]);
  const given = parseOptions(['--duration', '60', '--warmup', '0'], 2, steady);
  assert.deepEqual([given.rounds, given.durationS, given.warmupS], [1, 60, 0]);
  const quick = parseOptions(['--quick'], 2, steady);
  assert.deepEqual([quick.rounds, quick.durationS, quick.warmupS], [1, 2, 0]);
});
