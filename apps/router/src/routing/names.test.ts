// Name resolution as plain data: search_path parsing and which table an unqualified name means.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureCatalog } from './fixture-catalog.js';
import {
  NO_HOME_FACTS,
  PUBLIC_ONLY,
  homeRelations,
  nameContext,
  namedSnapshot,
  namesOf,
  parseSearchPath,
  resolveUnqualified,
} from './names.js';

const catalog = fixtureCatalog();

describe('parseSearchPath', () => {
  test('splits as SplitIdentifierString does', () => {
    assert.deepEqual(parseSearchPath('"$user", public'), ['$user', 'public']);
    assert.deepEqual(parseSearchPath('S9,Public'), ['s9', 'public']);
    assert.deepEqual(parseSearchPath(' "My ""Schema""" ,  x '), ['My "Schema"', 'x']);
    assert.deepEqual(parseSearchPath(''), []);
    assert.equal(parseSearchPath('a,,b'), undefined);
    assert.equal(parseSearchPath('"open'), undefined);
    assert.equal(parseSearchPath('a b'), undefined);
  });
});

describe('resolveUnqualified', () => {
  // Home has schemas public and s9, and a global table s9.orders shadowing sharded public.orders.
  const home = homeRelations(
    ['public', 's9', 'pg_catalog'],
    ['orders', 'countries'],
    [
      { schema: 's9', name: 'orders' },
      { schema: 'public', name: 'countries' },
    ],
  );
  const ctx = (path: string[], facts = home) => nameContext(path, 'app', facts);

  test('the first schema of the path holding the name wins', () => {
    assert.equal(resolveUnqualified(catalog, ctx(['public']), 'orders').kind, 'sharded');
    assert.deepEqual(resolveUnqualified(catalog, ctx(['s9', 'public']), 'orders'), {
      kind: 'global',
      schema: 's9',
      name: 'orders',
    });
    // A schema home does not have holds nothing.
    assert.equal(resolveUnqualified(catalog, ctx(['nosuch', 'public']), 'orders').kind, 'sharded');
    assert.equal(resolveUnqualified(catalog, ctx(['$user', 'public']), 'orders').kind, 'sharded');
  });

  test('a name no schema of the catalog has is global, for home to resolve', () => {
    assert.deepEqual(resolveUnqualified(catalog, ctx(['s9', 'public']), 'whatever'), {
      kind: 'global',
      schema: 's9',
      name: 'whatever',
    });
    assert.equal(resolveUnqualified(catalog, ctx(['s9']), 'orders').kind, 'global');
  });

  test('what home was not asked about is refused when it could shadow', () => {
    // "items" was not in the login lookup: s9 (which home has) might hold one.
    assert.throws(
      () => resolveUnqualified(catalog, ctx(['s9', 'public']), 'items'),
      (e: Error & { sqlstate?: string }) =>
        e.sqlstate === '0A000' && /qualify the name/.test(e.message),
    );
    assert.throws(() =>
      resolveUnqualified(catalog, ctx(['s9', 'public'], NO_HOME_FACTS), 'orders'),
    );
    // First in the path: nothing can shadow it.
    assert.equal(resolveUnqualified(catalog, ctx(['public', 's9']), 'items').kind, 'sharded');
  });

  test('pg_catalog is searched first unless listed; pg_temp is not the router’s', () => {
    assert.deepEqual(ctx(['public']).path, ['pg_catalog', 'public']);
    assert.deepEqual(ctx(['public', 'pg_catalog', 'pg_temp']).path, ['public', 'pg_catalog']);
    assert.deepEqual(ctx(['$user', 'public']).path, ['pg_catalog', 'app', 'public']);
  });

  test('a snapshot under a context: one object per key, plain snapshots resolve in public', () => {
    const a = namedSnapshot(catalog, ctx(['s9', 'public']));
    assert.equal(namedSnapshot(catalog, ctx(['s9', 'public'])), a);
    assert.notEqual(namedSnapshot(catalog, ctx(['public'])), a);
    assert.equal(namedSnapshot(a, ctx(['public'])), namedSnapshot(catalog, ctx(['public'])));
    assert.equal(namesOf(catalog), PUBLIC_ONLY);
    assert.equal(a.epoch, catalog.epoch);
    assert.equal(a.table('public', 'orders'), catalog.table('public', 'orders'));
  });
});
