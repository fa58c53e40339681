// fenceCheckSql as text: merged ranges, int8 literals that survive HASH_MIN, `false` for nothing.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import {
  fenceCheckSql,
  functionFenceCheckSql,
  isFunctionFence,
  ownsFunctionName,
  ownsFunctionSql,
  rowFilterSql,
  HASH_MAX,
  HASH_MIN,
  mergeRanges,
} from './index.js';

test('adjacent and overlapping ranges merge; separate ones stay apart, ordered', () => {
  assert.deepEqual(
    mergeRanges([
      { lo: 10n, hi: 19n },
      { lo: HASH_MIN, hi: -1n },
      { lo: 0n, hi: 5n },
      { lo: 30n, hi: 40n },
      { lo: 35n, hi: 50n },
      { lo: 51n, hi: 51n },
    ]),
    [
      { lo: HASH_MIN, hi: 5n },
      { lo: 10n, hi: 19n },
      { lo: 30n, hi: 51n },
    ],
  );
  assert.deepEqual(mergeRanges([]), []);
});

test('a node owning nothing gets false', () => {
  assert.equal(fenceCheckSql('id', 'bigint', 1n, []), 'false');
});

test('one merged range is one BETWEEN with quoted int8 literals', () => {
  assert.equal(
    fenceCheckSql('id', 'bigint', 0n, [
      { lo: HASH_MIN, hi: -1n },
      { lo: 0n, hi: HASH_MAX },
    ]),
    `hashint8extended(id, '0'::int8) BETWEEN '-9223372036854775808'::int8 AND '9223372036854775807'::int8`,
  );
});

test('several ranges are ORed in parentheses, with each key type its own function', () => {
  const ranges = [
    { lo: -100n, hi: -51n },
    { lo: 7n, hi: 7n },
  ];
  assert.equal(
    fenceCheckSql('"Account Id"', 'int', -5n, ranges),
    `(hashint4extended("Account Id", '-5'::int8) BETWEEN '-100'::int8 AND '-51'::int8` +
      ` OR hashint4extended("Account Id", '-5'::int8) BETWEEN '7'::int8 AND '7'::int8)`,
  );
  assert.match(
    fenceCheckSql('k', 'smallint', 1n, ranges),
    /^\(hashint2extended\(k, '1'::int8\) BETWEEN/,
  );
  assert.match(
    fenceCheckSql('k', 'text', 1n, ranges),
    /^\(hashtextextended\(k COLLATE "C", '1'::int8\) BETWEEN/,
  );
  assert.match(
    fenceCheckSql('k', 'uuid', 1n, ranges),
    /^\(uuid_hash_extended\(k, '1'::int8\) BETWEEN/,
  );
});

test('the fence function: its name, a body over the merged ranges, and the CHECK that calls it', () => {
  assert.equal(ownsFunctionName('tenants'), 'tessera.owns_tenants');
  assert.match(ownsFunctionName('Tenants'), /^tessera\.owns_x[0-9a-f]{16}$/);
  assert.notEqual(ownsFunctionName('Tenants'), ownsFunctionName('tenants2'));
  assert.equal(
    ownsFunctionSql('tenants', [
      { lo: 0n, hi: 9n },
      { lo: 10n, hi: 20n },
    ]),
    `CREATE OR REPLACE FUNCTION tessera.owns_tenants(h int8) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $tessera_owns$ SELECT h BETWEEN '0'::int8 AND '20'::int8 $tessera_owns$`,
  );
  assert.match(ownsFunctionSql('tenants', []), /SELECT false \$tessera_owns\$$/);
  assert.equal(
    functionFenceCheckSql('"Key"', 'text', 5n, 'tenants'),
    `tessera.owns_tenants(hashtextextended("Key" COLLATE "C", '5'::int8))`,
  );
  assert.ok(
    isFunctionFence(
      'CHECK (tessera.owns_tenants(hashint8extended(id, (0)::bigint))) NOT VALID',
      'tenants',
    ),
  );
  assert.ok(
    !isFunctionFence(`CHECK ((hashint8extended(id, (0)::bigint) >= 0)) NOT VALID`, 'tenants'),
  );
  assert.equal(
    rowFilterSql('id', 'bigint', 0n, { lo: -5n, hi: 5n }),
    `hashint8extended(id, '0'::int8) BETWEEN '-5'::int8 AND '5'::int8`,
  );
});
