// validateRanges: each way a keyspace's ranges can fail to cover the hash space once, named.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { CatalogInvalidError, HASH_MAX, HASH_MIN, validateRanges } from './index.js';

function expectInvalid(ranges: { lo: bigint; hi: bigint }[], message: string): void {
  assert.throws(
    () => validateRanges('users', ranges),
    (e: unknown) => {
      assert.ok(e instanceof CatalogInvalidError);
      assert.equal(e.code, 'CATALOG_INVALID');
      assert.equal(e.message, message);
      return true;
    },
  );
}

test('a single range over the whole space is valid, and order does not matter', () => {
  validateRanges('users', [{ lo: HASH_MIN, hi: HASH_MAX }]);
  validateRanges('users', [
    { lo: 10n, hi: HASH_MAX },
    { lo: HASH_MIN, hi: -1n },
    { lo: 0n, hi: 9n },
  ]);
  validateRanges('users', [
    { lo: HASH_MIN, hi: HASH_MIN },
    { lo: HASH_MIN + 1n, hi: HASH_MAX - 1n },
    { lo: HASH_MAX, hi: HASH_MAX },
  ]);
});

test('a keyspace without ranges is refused', () => {
  expectInvalid([], 'keyspace "users" has no ranges');
});

test('a range with lo above hi is refused', () => {
  expectInvalid(
    [
      { lo: HASH_MIN, hi: 5n },
      { lo: 7n, hi: 6n },
      { lo: 6n, hi: HASH_MAX },
    ],
    'keyspace "users" has a range [7, 6] whose lo is above its hi',
  );
});

test('a gap is refused with both sides named', () => {
  expectInvalid(
    [
      { lo: 0n, hi: HASH_MAX },
      { lo: HASH_MIN, hi: -2n },
    ],
    'keyspace "users" has a gap between -2 and 0: hashes -1 to -1 have no range',
  );
  expectInvalid(
    [
      { lo: HASH_MIN, hi: 100n },
      { lo: 200n, hi: HASH_MAX },
    ],
    'keyspace "users" has a gap between 100 and 200: hashes 101 to 199 have no range',
  );
});

test('an overlap is refused at its first shared hash', () => {
  expectInvalid(
    [
      { lo: HASH_MIN, hi: 0n },
      { lo: 0n, hi: HASH_MAX },
    ],
    'keyspace "users" has overlapping ranges at 0: [-9223372036854775808, 0] and [0, 9223372036854775807]',
  );
  expectInvalid(
    [
      { lo: HASH_MIN, hi: HASH_MAX },
      { lo: HASH_MIN, hi: HASH_MAX },
    ],
    `keyspace "users" has overlapping ranges at ${HASH_MIN}: [${HASH_MIN}, ${HASH_MAX}] and [${HASH_MIN}, ${HASH_MAX}]`,
  );
});

test('ranges that stop short of either end are refused', () => {
  expectInvalid(
    [{ lo: HASH_MIN + 1n, hi: HASH_MAX }],
    'keyspace "users" does not start at HASH_MIN (-9223372036854775808): its first range is [-9223372036854775807, 9223372036854775807]',
  );
  expectInvalid(
    [{ lo: HASH_MIN, hi: HASH_MAX - 1n }],
    'keyspace "users" does not end at HASH_MAX (9223372036854775807): its last range is [-9223372036854775808, 9223372036854775806]',
  );
  expectInvalid(
    [{ lo: HASH_MIN, hi: HASH_MAX + 1n }],
    'keyspace "users" does not end at HASH_MAX (9223372036854775807): its last range is [-9223372036854775808, 9223372036854775808]',
  );
});
