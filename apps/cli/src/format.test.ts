// Views and text output of catalog messages: enum names, int64 as JSON strings, aligned tables.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import {
  create,
  CatalogSchema,
  KeyType,
  NodeRole,
  NodeState,
  RangeState,
  TableKind,
} from '@tessera/proto';
import { statusView, textTable, toJson } from './format.js';

const catalog = create(CatalogSchema, {
  epoch: 7n,
  clusterUid: 'c-1',
  nodes: [
    { name: 'home', host: '127.0.0.1', port: 15432, role: NodeRole.HOME, state: NodeState.ACTIVE },
  ],
  keyspaces: [{ name: 'tenants', keyType: KeyType.BIGINT, seed: -3n }],
  ranges: [
    {
      keyspace: 'tenants',
      lo: -(2n ** 63n),
      hi: 2n ** 63n - 1n,
      owner: 'home',
      state: RangeState.ACTIVE,
    },
  ],
  tables: [
    {
      schema: 'public',
      name: 'orders',
      kind: TableKind.SHARDED,
      keyspace: 'tenants',
      keyColumn: 'tenant_id',
    },
    { schema: 'public', name: 'plans', kind: TableKind.REFERENCE },
  ],
});

test('status view nests ranges in their keyspace and names enums in lower case', () => {
  const v = statusView(catalog, []);
  assert.equal(v.nodes[0]?.role, 'home');
  assert.equal(v.nodes[0]?.address, '127.0.0.1:15432');
  assert.equal(v.keyspaces[0]?.type, 'bigint');
  assert.equal(v.keyspaces[0]?.ranges.length, 1);
  assert.equal(v.tables[1]?.keyspace, null);
});

test('JSON carries int64 values as exact decimal strings', () => {
  const doc = JSON.parse(toJson(statusView(catalog, []))) as {
    epoch: string;
    keyspaces: { seed: string; ranges: { lo: string; hi: string }[] }[];
  };
  assert.equal(doc.epoch, '7');
  assert.equal(doc.keyspaces[0]?.seed, '-3');
  assert.equal(doc.keyspaces[0]?.ranges[0]?.lo, '-9223372036854775808');
  assert.equal(doc.keyspaces[0]?.ranges[0]?.hi, '9223372036854775807');
});

test('text tables pad every column but the last', () => {
  assert.equal(
    textTable(
      ['a', 'bb'],
      [
        ['xxx', 'y'],
        ['z', 'w'],
      ],
    ),
    'A    BB\nxxx  y\nz    w\n',
  );
});

test('ranges sort by their numeric lo, not as text', () => {
  const c = create(CatalogSchema, {
    keyspaces: [{ name: 'k', keyType: KeyType.BIGINT }],
    ranges: [
      { keyspace: 'k', lo: -(2n ** 62n), hi: -1n, owner: 'a' },
      { keyspace: 'k', lo: 0n, hi: 2n ** 63n - 1n, owner: 'a' },
      { keyspace: 'k', lo: -(2n ** 63n), hi: -(2n ** 62n) - 1n, owner: 'b' },
    ],
  });
  assert.deepEqual(
    statusView(c, []).keyspaces[0]?.ranges.map((r) => r.owner),
    ['b', 'a', 'a'],
  );
});
