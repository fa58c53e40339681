import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workloadScript } from './scripts.js';

test('a contiguous set of branches uses random(), a list a CASE over a random index', () => {
  assert.match(workloadScript('select', { from: 1, to: 10 }), /^\\set bid random\(1, 10\)$/m);
  const s = workloadScript('tpcb-branch', { list: [3, 7, 9] });
  assert.match(s, /^\\set k random\(0, 2\)$/m);
  assert.match(s, /^\\set bid CASE WHEN :k = 0 THEN 3 WHEN :k = 1 THEN 7 ELSE 9 END$/m);
  assert.match(s, /^\\set tid \(:bid - 1\) \* 10 \+ random\(1, 10\)$/m);
  // Every statement pins the shard key.
  for (const line of s.split('\n').filter((l) => /^(UPDATE|SELECT)/.test(l)))
    assert.match(line, /bid = :bid/);
});
