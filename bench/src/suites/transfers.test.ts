import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makePairs, transferScript } from './transfers.js';

const byNode = [
  [1n, 4n, 7n],
  [2n, 5n, 8n],
  [3n, 6n, 9n],
];
const nodeOf = (id: bigint) => byNode.findIndex((l) => l.includes(id));

test('local pairs stay on one node, cross pairs span two, both in id order', () => {
  for (const [a, b] of makePairs(byNode, 'local', 50)) {
    assert.ok(a < b);
    assert.equal(nodeOf(a), nodeOf(b));
  }
  for (const [a, b] of makePairs(byNode, 'cross', 50)) {
    assert.ok(a < b);
    assert.notEqual(nodeOf(a), nodeOf(b));
  }
  assert.deepEqual(makePairs(byNode, 'cross', 20), makePairs(byNode, 'cross', 20));
});

test('the transfer looks its pair up, then moves money in one transaction, a before b', () => {
  const s = transferScript('cross_pairs', 500);
  assert.match(s, /^\\set i random\(1, 500\)$/m);
  assert.match(s, /^SELECT a, b FROM cross_pairs WHERE i = :i \\gset$/m);
  assert.match(s, /BEGIN;\nUPDATE .* WHERE id = :a;\nUPDATE .* WHERE id = :b;\nCOMMIT;\n$/);
});
