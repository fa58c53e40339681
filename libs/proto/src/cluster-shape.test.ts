// shapeSteps: the admin calls that declare a cluster's shape, in the coordinator's order, and
// only those the catalog does not already answer (what makes `tessera up` safe to run again).
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import {
  CatalogSchema,
  KeyType,
  NodeRole,
  TableKind,
  create,
  shapeSteps,
  type ClusterShape,
} from './index.js';

const SHAPE: ClusterShape = {
  tables: [
    { kind: 'sharded', name: 'orders', keyspace: 'tenants', keyColumn: 'tenant_id' },
    { kind: 'reference', schema: 'ref', name: 'countries' },
  ],
  keyspaces: [{ name: 'tenants', keyType: KeyType.BIGINT, ranges: 4 }],
  nodes: [
    { name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME },
    { name: 'data1', host: '127.0.0.1', port: 5433, role: NodeRole.DATA, replicaPort: 5434 },
  ],
};

test('on an empty catalog: every node, then every keyspace, then every table', () => {
  const steps = shapeSteps(SHAPE, create(CatalogSchema, {}));
  assert.deepEqual(
    steps.map((s) => `${s.call} ${s.request.name}`),
    [
      'addNode home',
      'addNode data1',
      'createKeyspace tenants',
      'distributeTable orders',
      'referenceTable countries',
    ],
  );
  assert.deepEqual(steps[1]?.request, SHAPE.nodes?.[1]);
  assert.deepEqual(steps[2]?.request, {
    name: 'tenants',
    keyType: KeyType.BIGINT,
    ranges: 4,
    seed: 0n,
  });
  assert.deepEqual(steps[3]?.request, {
    schema: 'public',
    name: 'orders',
    keyspace: 'tenants',
    keyColumn: 'tenant_id',
  });
  assert.deepEqual(steps[4]?.request, { schema: 'ref', name: 'countries' });
});

test('what the catalog already names is skipped, by name (and schema for tables)', () => {
  const catalog = create(CatalogSchema, {
    nodes: [{ name: 'home', port: 1 }],
    keyspaces: [{ name: 'tenants', keyType: KeyType.UUID }],
    tables: [
      { schema: 'public', name: 'orders', kind: TableKind.SHARDED },
      { schema: 'public', name: 'countries', kind: TableKind.REFERENCE },
    ],
  });
  const steps = shapeSteps(SHAPE, catalog);
  // The keyspace differs (uuid, not bigint) and is still left alone: declaring never changes.
  assert.deepEqual(
    steps.map((s) => `${s.call} ${s.request.name}`),
    ['addNode data1', 'referenceTable countries'],
  );
});

test('a catalog that has the whole shape needs no call', () => {
  const full = create(CatalogSchema, {
    nodes: [{ name: 'home' }, { name: 'data1' }],
    keyspaces: [{ name: 'tenants' }],
    tables: [
      { schema: 'public', name: 'orders' },
      { schema: 'ref', name: 'countries' },
    ],
  });
  assert.deepEqual(shapeSteps(SHAPE, full), []);
  assert.deepEqual(shapeSteps({}, create(CatalogSchema, {})), []);
});
