// buildSnapshot: a valid catalog indexed for routing, every invariant refused by name, and a
// snapshot that cannot be changed once built. (What the coordinator's messages cannot even say
// as domain types, a node without a role and the like, is refused by @tessera/proto's mapper.)
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { hashKeyText } from '@tessera/pg-hash';
import {
  buildSnapshot,
  CatalogInvalidError,
  evenRanges,
  HASH_MAX,
  HASH_MIN,
  UnknownKeyspaceError,
  type Catalog,
} from './index.js';

const SEED = 42n;

/** A catalog a test may change anywhere (plain objects, typed loosely). */
function catalog() {
  const [r0, r1, r2] = evenRanges(3);
  return {
    epoch: 7n,
    clusterUid: 'c-1',
    nodes: [
      { name: 'home', host: '127.0.0.1', port: 5432, role: 'home', state: 'active' },
      { name: 'd1', host: '127.0.0.1', port: 5433, role: 'data', state: 'active' },
      { name: 'd2', host: '127.0.0.1', port: 5434, role: 'data', state: 'draining' },
    ],
    keyspaces: [
      { name: 'users', keyType: 'bigint', seed: SEED },
      { name: 'docs', keyType: 'uuid', seed: 0n },
    ],
    ranges: [
      { keyspace: 'users', lo: r0!.lo, hi: r0!.hi, owner: 'd1', state: 'active' },
      { keyspace: 'users', lo: r1!.lo, hi: r1!.hi, owner: 'd2', state: 'frozen' },
      { keyspace: 'users', lo: r2!.lo, hi: r2!.hi, owner: 'd1', state: 'active' },
      { keyspace: 'docs', lo: HASH_MIN, hi: HASH_MAX, owner: 'home', state: 'active' },
    ],
    tables: [
      { schema: 'public', name: 'accounts', kind: 'sharded', keyspace: 'users', keyColumn: 'id' },
      {
        schema: 'public',
        name: 'orders',
        kind: 'sharded',
        keyspace: 'users',
        keyColumn: 'account_id',
      },
      { schema: 'public', name: 'countries', kind: 'reference' },
      { schema: 'ops', name: 'settings', kind: 'global' },
    ] as Record<string, string>[],
  };
}

type MutableCatalog = ReturnType<typeof catalog>;

const build = (c: MutableCatalog) => buildSnapshot(c as unknown as Catalog);

function expectRefused(mutate: (c: MutableCatalog) => void, message: string): void {
  const c = catalog();
  mutate(c);
  assert.throws(
    () => build(c),
    (e: unknown) => {
      assert.ok(e instanceof CatalogInvalidError, String(e));
      assert.equal(e.code, 'CATALOG_INVALID');
      assert.equal(e.message, message);
      return true;
    },
  );
}

test('a valid catalog is indexed by name', () => {
  const s = build(catalog());
  assert.equal(s.epoch, 7n);
  assert.equal(s.clusterUid, 'c-1');
  assert.deepEqual(s.nodes, ['d1', 'd2', 'home']);
  assert.equal(s.home, 'home');
  assert.equal(s.node('d2')?.state, 'draining');
  assert.deepEqual(s.address('d1'), { host: '127.0.0.1', port: 5433 });
  assert.equal(s.keyspace('users')?.keyType, 'bigint');
  assert.equal(s.keyspace('users')?.seed, SEED);
  assert.equal(s.keyspace('users')?.ranges.size, 3);
  assert.deepEqual(s.keyspace('users')?.owners, ['d1', 'd2']);
  assert.equal(s.keyspace('docs')?.keyType, 'uuid');
  const orders = s.table('public', 'orders');
  assert.equal(orders?.kind === 'sharded' && orders.keyColumn, 'account_id');
  assert.equal(orders?.kind === 'sharded' && orders.keyspace, s.keyspace('users'));
  assert.equal(s.table('public', 'countries')?.kind, 'reference');
  assert.equal(s.table('ops', 'settings')?.kind, 'global');
  assert.equal(s.table('public', 'nope'), undefined);
});

test('ownerOf, rangeOf and isFrozen route by the Postgres hash of the key', () => {
  const s = build(catalog());
  const users = s.keyspace('users')!;
  const seen = new Set<string>();
  let frozen = 0;
  for (let i = -500; i < 500; i++) {
    const hash = hashKeyText('bigint', String(i * 1_000_003), SEED);
    const range = s.rangeOf('users', hash);
    assert.ok(range.lo <= hash && hash <= range.hi);
    assert.equal(range, users.ranges.ownerOf(hash));
    assert.equal(s.ownerOf('users', hash), range.owner);
    assert.equal(users.ownerOf(hash), range.owner);
    assert.equal(s.isFrozen('users', hash), range.owner === 'd2');
    if (s.isFrozen('users', hash)) frozen++;
    seen.add(range.owner);
  }
  assert.deepEqual([...seen].sort(), ['d1', 'd2']);
  assert.ok(frozen > 0);
  assert.throws(() => s.ownerOf('nope', 1n), UnknownKeyspaceError);
});

test('frozen ranges and failing-over nodes are flagged for the statement path', () => {
  const s = build(catalog());
  assert.equal(s.hasFrozen, true);
  assert.equal(s.keyspace('users')?.hasFrozen, true);
  assert.equal(s.keyspace('docs')?.hasFrozen, false);
  assert.equal(s.failingOver.size, 0);
  const c = catalog();
  c.ranges[1]!.state = 'active';
  (c.nodes[1] as { failingOver?: boolean }).failingOver = true;
  const t = build(c);
  assert.equal(t.hasFrozen, false);
  assert.deepEqual([...t.failingOver], ['d1']);
});

test('ownedRanges groups a node’s ranges by keyspace, ordered by lo', () => {
  const s = build(catalog());
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
  assert.equal(s.ownedRanges('d2').get('users')![0]!.state, 'frozen');
  assert.deepEqual([...s.ownedRanges('home').keys()], ['docs']);
  assert.equal(s.ownedRanges('nobody').size, 0);
});

test('a snapshot and everything in it are immutable, and independent of the catalog it came from', () => {
  const c = catalog();
  const s = build(c);
  assert.ok(Object.isFrozen(s));
  assert.ok(Object.isFrozen(s.node('home')));
  assert.ok(Object.isFrozen(s.nodes));
  assert.throws(() => (s.failingOver as Set<string>).add('x'), TypeError);
  assert.throws(() => (s.ownedRanges('d1') as Map<string, unknown>).clear(), TypeError);
  assert.throws(() => {
    (s.keyspace('users')!.ranges.ranges[0] as { owner: string }).owner = 'home';
  }, TypeError);
  assert.throws(() => {
    (s.keyspace('users') as { seed: bigint }).seed = 1n;
  }, TypeError);
  c.nodes[0]!.name = 'renamed';
  c.ranges[0]!.owner = 'd2';
  assert.equal(s.home, 'home');
  assert.equal(s.keyspace('users')!.ranges.ranges[0]!.owner, 'd1');
  assert.ok(!Object.isFrozen(c.nodes[0]));
});

test('node problems are refused', () => {
  expectRefused(
    (c) => (c.nodes[1]!.role = 'home'),
    'the catalog has 2 home nodes (home, d1); exactly one is required',
  );
  expectRefused((c) => (c.nodes[0]!.role = 'data'), 'the catalog has no home node');
  expectRefused((c) => (c.nodes[2]!.name = 'd1'), 'node "d1" appears twice in the catalog');
  expectRefused((c) => (c.nodes[2]!.name = ''), 'the catalog has a node without a name');
  expectRefused((c) => (c.nodes[0]!.state = 'removed'), 'the home node "home" is removed');
});

test('keyspace and range problems are refused', () => {
  const [r0, r1] = evenRanges(3);
  expectRefused(
    (c) => (c.keyspaces[1]!.name = 'users'),
    'keyspace "users" appears twice in the catalog',
  );
  expectRefused((c) => (c.keyspaces[1]!.name = ''), 'the catalog has a keyspace without a name');
  expectRefused(
    (c) => (c.ranges[0]!.owner = 'ghost'),
    `range [${r0!.lo}, ${r0!.hi}] of keyspace "users" is owned by unknown node "ghost"`,
  );
  expectRefused(
    (c) => (c.nodes[2]!.state = 'removed'),
    `range [${r1!.lo}, ${r1!.hi}] of keyspace "users" is owned by node "d2", which is removed`,
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

test('a schema and a table whose names hold dots are two names, not one string', () => {
  const c = catalog();
  c.tables.push(
    { schema: 'a.b', name: 'c', kind: 'reference' },
    { schema: 'a', name: 'b.c', kind: 'global' },
  );
  const s = build(c);
  assert.equal(s.table('a.b', 'c')?.kind, 'reference');
  assert.equal(s.table('a', 'b.c')?.kind, 'global');
  assert.equal(s.table('a', 'b'), undefined);
  assert.deepEqual(
    s.tables.map((t) => `${t.schema}|${t.name}`),
    c.tables.map((t) => `${t['schema']}|${t['name']}`),
  );
});

test('table problems are refused', () => {
  expectRefused(
    (c) => (c.tables[1]!['name'] = 'accounts'),
    'table "public.accounts" appears twice in the catalog',
  );
  expectRefused(
    (c) => (c.tables[0]!['keyspace'] = ''),
    'sharded table "public.accounts" has no keyspace',
  );
  expectRefused(
    (c) => (c.tables[0]!['keyspace'] = 'ghosts'),
    'sharded table "public.accounts" names unknown keyspace "ghosts"',
  );
  expectRefused(
    (c) => (c.tables[0]!['keyColumn'] = ''),
    'sharded table "public.accounts" has no key column',
  );
  expectRefused(
    (c) => (c.tables[3]!['schema'] = ''),
    'table ".settings" needs both a schema and a name',
  );
});
