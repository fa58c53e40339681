// Key type names: the catalog enum to SQL names and back, aliases, and refusals.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { KeyType } from '@tessera/proto';
import { CatalogInvalidError, hashFunctionName, keyTypeName, parseKeyType } from './index.js';

test('every catalog key type has a name that parses back to it', () => {
  const expected: [KeyType, string, string][] = [
    [KeyType.BIGINT, 'bigint', 'hashint8extended'],
    [KeyType.INT, 'int', 'hashint4extended'],
    [KeyType.SMALLINT, 'smallint', 'hashint2extended'],
    [KeyType.TEXT, 'text', 'hashtextextended'],
    [KeyType.UUID, 'uuid', 'uuid_hash_extended'],
  ];
  for (const [enumValue, name, fn] of expected) {
    assert.equal(keyTypeName(enumValue), name);
    assert.equal(parseKeyType(name), enumValue);
    assert.equal(hashFunctionName(keyTypeName(enumValue)), fn);
  }
});

test('parseKeyType accepts Postgres aliases, any case, surrounding space', () => {
  assert.equal(parseKeyType('int8'), KeyType.BIGINT);
  assert.equal(parseKeyType('INT4'), KeyType.INT);
  assert.equal(parseKeyType('Integer'), KeyType.INT);
  assert.equal(parseKeyType(' int2 '), KeyType.SMALLINT);
  assert.equal(parseKeyType('varchar'), KeyType.TEXT);
  assert.equal(parseKeyType('character  varying'), KeyType.TEXT);
  assert.equal(parseKeyType('UUID'), KeyType.UUID);
});

test('unsupported key types are refused with the supported ones listed', () => {
  for (const name of ['numeric', 'float8', 'timestamp', '', 'serial', 'bigserial', 'char']) {
    assert.throws(
      () => parseKeyType(name),
      (e: unknown) =>
        e instanceof CatalogInvalidError &&
        e.message ===
          `key type "${name}" is not supported; supported key types are bigint (int8), int (integer, int4), smallint (int2), text (varchar) and uuid`,
    );
  }
  assert.throws(
    () => keyTypeName(KeyType.UNSPECIFIED),
    /key type is unspecified; supported key types are bigint/,
  );
  assert.throws(() => keyTypeName(99 as KeyType), /key type 99 is unknown/);
});
