// The catalog mapper: a coordinator Catalog message becomes @tessera/keyspace's domain catalog,
// every enum by name; what the domain cannot represent is refused by name; key type names map
// both ways.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { CatalogInvalidError, buildSnapshot } from '@tessera/keyspace';
import {
  CatalogSchema,
  KeyType,
  NodeRole,
  NodeState,
  RangeState,
  TableKind,
  catalogFromMessage,
  create,
  keyTypeName,
  keyTypeOf,
  parseKeyType,
  type Catalog,
} from './index.js';

const MIN = -(2n ** 63n);
const MAX = 2n ** 63n - 1n;

function message(): Catalog {
  return create(CatalogSchema, {
    epoch: 3n,
    clusterUid: 'u',
    nodes: [
      { name: 'home', host: 'h', port: 1, role: NodeRole.HOME, state: NodeState.ACTIVE },
      {
        name: 'd1',
        host: 'a',
        port: 2,
        role: NodeRole.DATA,
        state: NodeState.JOINING,
        replicaHost: 'r',
        replicaPort: 3,
        failingOver: true,
      },
      { name: 'd2', host: 'b', port: 4, role: NodeRole.DATA, state: NodeState.REMOVED },
    ],
    keyspaces: [{ name: 'ks', keyType: KeyType.TEXT, seed: 9n }],
    ranges: [
      { keyspace: 'ks', lo: MIN, hi: -1n, owner: 'home', state: RangeState.ACTIVE },
      { keyspace: 'ks', lo: 0n, hi: MAX, owner: 'd1', state: RangeState.FROZEN },
    ],
    tables: [
      { schema: 'public', name: 's', kind: TableKind.SHARDED, keyspace: 'ks', keyColumn: 'k' },
      { schema: 'public', name: 'r', kind: TableKind.REFERENCE },
      { schema: 'public', name: 'g', kind: TableKind.GLOBAL },
    ],
    moves: [{ keyspace: 'ks', lo: 0n, hi: MAX, jobId: 7n, source: 'd1', target: 'd2' }],
  });
}

test('every field and enum of a Catalog message maps to the domain catalog', () => {
  assert.deepEqual(catalogFromMessage(message()), {
    epoch: 3n,
    clusterUid: 'u',
    nodes: [
      {
        name: 'home',
        host: 'h',
        port: 1,
        role: 'home',
        state: 'active',
        replica: undefined,
        failingOver: false,
      },
      {
        name: 'd1',
        host: 'a',
        port: 2,
        role: 'data',
        state: 'joining',
        replica: { host: 'r', port: 3 },
        failingOver: true,
      },
      {
        name: 'd2',
        host: 'b',
        port: 4,
        role: 'data',
        state: 'removed',
        replica: undefined,
        failingOver: false,
      },
    ],
    keyspaces: [{ name: 'ks', keyType: 'text', seed: 9n }],
    ranges: [
      { keyspace: 'ks', lo: MIN, hi: -1n, owner: 'home', state: 'active' },
      { keyspace: 'ks', lo: 0n, hi: MAX, owner: 'd1', state: 'frozen' },
    ],
    tables: [
      { kind: 'sharded', schema: 'public', name: 's', keyspace: 'ks', keyColumn: 'k' },
      { kind: 'reference', schema: 'public', name: 'r' },
      { kind: 'global', schema: 'public', name: 'g' },
    ],
    moves: [{ keyspace: 'ks', lo: 0n, hi: MAX, jobId: 7n, source: 'd1', target: 'd2' }],
  });
  // And the result is a catalog the snapshot accepts.
  assert.equal(buildSnapshot(catalogFromMessage(message())).isFrozen('ks', 1n), true);
});

function refused(mutate: (c: Catalog) => void, text: string): void {
  const c = message();
  mutate(c);
  assert.throws(
    () => catalogFromMessage(c),
    (e: unknown) => e instanceof CatalogInvalidError && e.message === text,
  );
}

test('what the domain cannot represent is refused by name', () => {
  refused((c) => (c.nodes[1]!.role = NodeRole.UNSPECIFIED), 'node "d1" has no role (home or data)');
  refused((c) => (c.nodes[1]!.state = NodeState.UNSPECIFIED), 'node "d1" has no state');
  refused(
    (c) => (c.ranges[1]!.state = RangeState.UNSPECIFIED),
    `range [0, ${MAX}] of keyspace "ks" has no state (active or frozen)`,
  );
  refused(
    (c) => (c.keyspaces[0]!.keyType = KeyType.UNSPECIFIED),
    'keyspace "ks": key type is unspecified; supported key types are bigint (int8), int (integer, int4), smallint (int2), text (varchar) and uuid',
  );
  refused(
    (c) => (c.tables[1]!.kind = TableKind.UNSPECIFIED),
    'table "public.r" has no kind (sharded, reference or global)',
  );
  refused(
    (c) => (c.tables[1]!.keyColumn = 'id'),
    'reference table "public.r" has a keyspace or key column, which only sharded tables have',
  );
  refused(
    (c) => (c.tables[2]!.keyspace = 'ks'),
    'global table "public.g" has a keyspace or key column, which only sharded tables have',
  );
});

test('every catalog key type has a name that maps back to it', () => {
  const all: [KeyType, string][] = [
    [KeyType.BIGINT, 'bigint'],
    [KeyType.INT, 'int'],
    [KeyType.SMALLINT, 'smallint'],
    [KeyType.TEXT, 'text'],
    [KeyType.UUID, 'uuid'],
  ];
  for (const [enumValue, name] of all) {
    assert.equal(keyTypeName(enumValue), name);
    assert.equal(keyTypeOf(keyTypeName(enumValue)), enumValue);
    assert.equal(parseKeyType(name), enumValue);
  }
  assert.equal(parseKeyType(' INT8 '), KeyType.BIGINT);
  assert.throws(() => parseKeyType('numeric'), CatalogInvalidError);
  assert.throws(() => keyTypeName(KeyType.UNSPECIFIED), /key type is unspecified/);
  assert.throws(() => keyTypeName(99 as KeyType), /key type 99 is unknown/);
});
