import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CatalogSchema, NodeRole, create } from '@tessera/proto';
import { resolvePick } from './mover.js';

const catalog = create(CatalogSchema, {
  nodes: [
    { name: 'home', role: NodeRole.HOME },
    { name: 'data1', role: NodeRole.DATA },
    { name: 'data2', role: NodeRole.DATA },
    { name: 'data3', role: NodeRole.DATA },
  ],
  ranges: [
    { keyspace: 'soak_lists', lo: 0n, hi: 99n, owner: 'data2' },
    { keyspace: 'soak_lists', lo: -100n, hi: -1n, owner: 'data1' },
    { keyspace: 'soak_bank', lo: -100n, hi: 99n, owner: 'data3' },
  ],
});

test('a pick names a range of its keyspace in key order and another data node, never home', () => {
  const a = resolvePick(catalog, { keyspace: 'soak_lists', rangeSlot: 0, nodeSlot: 0 });
  assert.deepEqual(a, { keyspace: 'soak_lists', lo: -100n, hi: -1n, owner: 'data1', to: 'data2' });
  const b = resolvePick(catalog, { keyspace: 'soak_lists', rangeSlot: 3, nodeSlot: 1 });
  assert.deepEqual(b, { keyspace: 'soak_lists', lo: 0n, hi: 99n, owner: 'data2', to: 'data3' });
  const c = resolvePick(catalog, { keyspace: 'soak_bank', rangeSlot: 7, nodeSlot: 5 });
  assert.equal(c.owner, 'data3');
  assert.equal(c.to, 'data2');
  assert.throws(
    () => resolvePick(catalog, { keyspace: 'nope', rangeSlot: 0, nodeSlot: 0 }),
    /keyspace nope has no ranges/,
  );
});
