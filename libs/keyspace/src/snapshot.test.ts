// buildSnapshot: a valid catalog indexed for routing, every invariant refused by name, and a
// snapshot that cannot be changed once built.
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
import type { Catalog } from '@tessera/proto';
import { hashKeyText, KeyValueError } from '@tessera/pg-hash';
import {
  buildSnapshot,
  CatalogInvalidError,
  evenRanges,
  HASH_MAX,
  HASH_MIN,
  UnknownKeyspaceError,
} from './index.js';

const SEED = 42n;

function catalog(): Catalog {
  const [r0, r1, r2] = evenRanges(3);
  return create(CatalogSchema, {
    epoch: 7n,
    clusterUid: 'c-1',
    nodes: [
      { name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME, state: NodeState.ACTIVE },
      { name: 'd1', host: '127.0.0.1', port: 5433, role: NodeRole.DATA, state: NodeState.ACTIVE },
      { name: 'd2', host: '127.0.0.1', port: 5434, role: NodeRole.DATA, state: NodeState.DRAINING },
    ],
    keyspaces: [
      { name: 'users', keyType: KeyType.BIGINT, seed: SEED },
      { name: 'docs', keyType: KeyType.UUID, seed: 0n },
    ],
    ranges: [
      { keyspace: 'users', lo: r0!.lo, hi: r0!.hi, owner: 'd1', state: RangeState.ACTIVE },
      { keyspace: 'users', lo: r1!.lo, hi: r1!.hi, owner: 'd2', state: RangeState.FROZEN },
      { keyspace: 'users', lo: r2!.lo, hi: r2!.hi, owner: 'd1', state: RangeState.ACTIVE },
      { keyspace: 'docs', lo: HASH_MIN, hi: HASH_MAX, owner: 'home', state: RangeState.ACTIVE },
    ],
    tables: [
      {
        schema: 'public',
        name: 'accounts',
        kind: TableKind.SHARDED,
        keyspace: 'users',
        keyColumn: 'id',
      },
      {
        schema: 'public',
        name: 'orders',
        kind: TableKind.SHARDED,
        keyspace: 'users',
        keyColumn: 'account_id',
      },
      { schema: 'public', name: 'countries', kind: TableKind.REFERENCE },
      { schema: 'ops', name: 'settings', kind: TableKind.GLOBAL },
    ],
  });
}

function expectRefused(mutate: (c: Catalog) => void, message: string): void {
  const c = catalog();
  mutate(c);
  assert.throws(
    () => buildSnapshot(c),
    (e: unknown) => {
      assert.ok(e instanceof CatalogInvalidError, String(e));
      assert.equal(e.code, 'CATALOG_INVALID');
      assert.equal(e.message, message);
      return true;
    },
  );
}

test('a valid catalog is indexed by name', () => {
  const s = buildSnapshot(catalog());
  assert.equal(s.epoch, 7n);
  assert.equal(s.clusterUid, 'c-1');
  assert.deepEqual([...s.nodes.keys()], ['home', 'd1', 'd2']);
  assert.equal(s.home.name, 'home');
  assert.equal(s.keyspaces.get('users')?.keyType, 'bigint');
  assert.equal(s.keyspaces.get('users')?.seed, SEED);
  assert.equal(s.keyspaces.get('users')?.ranges.size, 3);
  assert.equal(s.keyspaces.get('docs')?.keyType, 'uuid');
  assert.equal(s.tableOf('public', 'orders')?.keyColumn, 'account_id');
  assert.equal(s.tableOf('public', 'countries')?.kind, TableKind.REFERENCE);
  assert.equal(s.tableOf('public', 'nope'), undefined);
  assert.equal(s.tables.size, 4);
});

test('ownerOfKey and rangeOfKey route by the Postgres hash of the key', () => {
  const s = buildSnapshot(catalog());
  const users = s.keyspaces.get('users')!;
  const seen = new Set<string>();
  for (let i = -500; i < 500; i++) {
    const key = String(i * 1_000_003);
    const range = s.rangeOfKey('users', key);
    const hash = hashKeyText('bigint', key, SEED);
    assert.ok(range.lo <= hash && hash <= range.hi);
    assert.equal(range, users.ranges.ownerOf(hash));
    assert.equal(s.ownerOfKey('users', key), s.nodes.get(range.owner));
    seen.add(range.owner);
  }
  assert.deepEqual([...seen].sort(), ['d1', 'd2']);
  assert.equal(s.ownerOfKey('docs', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11').name, 'home');
  assert.equal(s.rangeOfKey('users', ' 12 '), s.rangeOfKey('users', '12'));
  assert.throws(() => s.ownerOfKey('users', 'abc'), KeyValueError);
  assert.throws(() => s.ownerOfKey('users', '9223372036854775808'), /out of range for type bigint/);
  assert.throws(() => s.ownerOfKey('nope', '1'), UnknownKeyspaceError);
});

test('ownedRanges groups a node’s ranges by keyspace, ordered by lo', () => {
  const s = buildSnapshot(catalog());
  const [r0, , r2] = evenRanges(3);
  const d1 = s.ownedRanges('d1');
  assert.deepEqual([...d1.keys()], ['users']);
  assert.deepEqual(
    d1.get('users')!.map((r) => [r.lo, r.hi]),
    [
      [r0!.lo, r0!.hi],
      [r2!.lo, r2!.hi],
    ],
  );
  assert.equal(s.ownedRanges('d2').get('users')![0]!.state, RangeState.FROZEN);
  assert.deepEqual([...s.ownedRanges('home').keys()], ['docs']);
  assert.equal(s.ownedRanges('nobody').size, 0);
});

test('a snapshot and everything in it are immutable, and independent of the catalog it came from', () => {
  const c = catalog();
  const s = buildSnapshot(c);
  assert.ok(Object.isFrozen(s));
  assert.ok(Object.isFrozen(s.home));
  assert.throws(() => (s.nodes as Map<string, unknown>).set('x', {}), TypeError);
  assert.throws(() => (s.tables as Map<string, unknown>).delete('public.accounts'), TypeError);
  assert.throws(() => (s.keyspaces as Map<string, unknown>).clear(), TypeError);
  assert.throws(() => (s.ownedRanges('d1') as Map<string, unknown>).clear(), TypeError);
  assert.throws(() => {
    (s.keyspaces.get('users')!.ranges.ranges[0] as { owner: string }).owner = 'home';
  }, TypeError);
  assert.throws(() => {
    (s.keyspaces.get('users')!.keyspace as { seed: bigint }).seed = 1n;
  }, TypeError);
  c.nodes[0]!.name = 'renamed';
  c.ranges[0]!.owner = 'd2';
  assert.equal(s.home.name, 'home');
  assert.equal(s.keyspaces.get('users')!.ranges.ranges[0]!.owner, 'd1');
  assert.ok(!Object.isFrozen(c.nodes[0]));
});

test('node problems are refused', () => {
  expectRefused(
    (c) => (c.nodes[1]!.role = NodeRole.HOME),
    'the catalog has 2 home nodes (home, d1); exactly one is required',
  );
  expectRefused((c) => (c.nodes[0]!.role = NodeRole.DATA), 'the catalog has no home node');
  expectRefused((c) => (c.nodes[2]!.name = 'd1'), 'node "d1" appears twice in the catalog');
  expectRefused((c) => (c.nodes[2]!.name = ''), 'the catalog has a node without a name');
  expectRefused(
    (c) => (c.nodes[2]!.role = NodeRole.UNSPECIFIED),
    'node "d2" has no role (home or data)',
  );
  expectRefused((c) => (c.nodes[2]!.state = NodeState.UNSPECIFIED), 'node "d2" has no state');
  expectRefused((c) => (c.nodes[0]!.state = NodeState.REMOVED), 'the home node "home" is removed');
});

test('keyspace and range problems are refused', () => {
  const [r0, r1] = evenRanges(3);
  expectRefused(
    (c) => (c.keyspaces[1]!.name = 'users'),
    'keyspace "users" appears twice in the catalog',
  );
  expectRefused((c) => (c.keyspaces[1]!.name = ''), 'the catalog has a keyspace without a name');
  expectRefused(
    (c) => (c.keyspaces[0]!.keyType = KeyType.UNSPECIFIED),
    'keyspace "users": key type is unspecified; supported key types are bigint (int8), int (integer, int4), smallint (int2), text (varchar) and uuid',
  );
  expectRefused(
    (c) => (c.ranges[0]!.owner = 'ghost'),
    `range [${r0!.lo}, ${r0!.hi}] of keyspace "users" is owned by unknown node "ghost"`,
  );
  expectRefused(
    (c) => (c.nodes[2]!.state = NodeState.REMOVED),
    `range [${r1!.lo}, ${r1!.hi}] of keyspace "users" is owned by node "d2", which is removed`,
  );
  expectRefused(
    (c) => (c.ranges[1]!.state = RangeState.UNSPECIFIED),
    `range [${r1!.lo}, ${r1!.hi}] of keyspace "users" has no state (active or frozen)`,
  );
  expectRefused(
    (c) => (c.ranges[3]!.keyspace = 'ghosts'),
    `range [${HASH_MIN}, ${HASH_MAX}] of keyspace "ghosts" belongs to no declared keyspace`,
  );
  expectRefused((c) => c.ranges.splice(3, 1), 'keyspace "docs" has no ranges');
  expectRefused(
    (c) => c.ranges.splice(1, 1),
    `keyspace "users" has a gap between ${r0!.hi} and ${r1!.hi + 1n}: hashes ${r1!.lo} to ${r1!.hi} have no range`,
  );
  expectRefused(
    (c) => (c.ranges[1]!.lo -= 1n),
    `keyspace "users" has overlapping ranges at ${r0!.hi}: [${r0!.lo}, ${r0!.hi}] and [${r0!.hi}, ${r1!.hi}]`,
  );
});

test('table problems are refused', () => {
  expectRefused(
    (c) => (c.tables[1]!.name = 'accounts'),
    'table "public.accounts" appears twice in the catalog',
  );
  expectRefused(
    (c) => (c.tables[0]!.keyspace = ''),
    'sharded table "public.accounts" has no keyspace',
  );
  expectRefused(
    (c) => (c.tables[0]!.keyspace = 'ghosts'),
    'sharded table "public.accounts" names unknown keyspace "ghosts"',
  );
  expectRefused(
    (c) => (c.tables[0]!.keyColumn = ''),
    'sharded table "public.accounts" has no key column',
  );
  expectRefused(
    (c) => (c.tables[2]!.kind = TableKind.UNSPECIFIED),
    'table "public.countries" has no kind (sharded, reference or global)',
  );
  expectRefused(
    (c) => (c.tables[2]!.keyColumn = 'id'),
    'reference table "public.countries" has a keyspace or key column, which only sharded tables have',
  );
  expectRefused(
    (c) => (c.tables[3]!.schema = ''),
    'table ".settings" needs both a schema and a name',
  );
});
