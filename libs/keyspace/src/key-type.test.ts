// Key type names: SQL names and their aliases, the hash function of each, and refusals. (The
// catalog enum to names and back is @tessera/proto's catalog-mapper.)
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { CatalogInvalidError, hashFunctionName, parseKeyTypeName } from './index.js';

test('every key type has its hash function', () => {
  assert.equal(hashFunctionName('bigint'), 'hashint8extended');
  assert.equal(hashFunctionName('int'), 'hashint4extended');
  assert.equal(hashFunctionName('smallint'), 'hashint2extended');
  assert.equal(hashFunctionName('text'), 'hashtextextended');
  assert.equal(hashFunctionName('uuid'), 'uuid_hash_extended');
});

test('parseKeyTypeName accepts Postgres aliases, any case, surrounding space', () => {
  assert.equal(parseKeyTypeName('bigint'), 'bigint');
  assert.equal(parseKeyTypeName('int8'), 'bigint');
  assert.equal(parseKeyTypeName('INT4'), 'int');
  assert.equal(parseKeyTypeName('Integer'), 'int');
  assert.equal(parseKeyTypeName(' int2 '), 'smallint');
  assert.equal(parseKeyTypeName('varchar'), 'text');
  assert.equal(parseKeyTypeName('character  varying'), 'text');
  assert.equal(parseKeyTypeName('UUID'), 'uuid');
});

test('unsupported key types are refused with the supported ones listed', () => {
  for (const name of ['numeric', 'float8', 'timestamp', '', 'serial', 'bigserial', 'char']) {
    assert.throws(
      () => parseKeyTypeName(name),
      (e: unknown) =>
        e instanceof CatalogInvalidError &&
        e.message ===
          `key type "${name}" is not supported; supported key types are bigint (int8), int (integer, int4), smallint (int2), text (varchar) and uuid`,
    );
  }
});
