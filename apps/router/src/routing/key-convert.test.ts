// Integer keys from parameters and literals of other types, as Postgres compares or stores them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hashKeyText, hashKeyUtf8 } from '@tessera/pg-hash';
import {
  OID,
  convertNumericLiteral,
  convertParam,
  decodeNumeric,
  isShortInteger,
} from './key-convert.js';

const text = (s: string) => Buffer.from(s);
const f8 = (x: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(x);
  return b;
};
/** numeric_send of 12345678.9 (weight 1: 1234|5678|.9000), dscale 1. */
const NUMERIC_12345678_9 = Buffer.from([
  0, 3, 0, 1, 0, 0, 0, 1, 0x04, 0xd2, 0x16, 0x2e, 0x23, 0x28,
]);

describe('convertParam', () => {
  test('float8 compared: integral values pin, fractions and NaN match nothing', () => {
    assert.deepEqual(convertParam('bigint', OID.float8, text('3.0'), 0, 'compare'), {
      kind: 'key',
      value: 3n,
    });
    assert.deepEqual(convertParam('bigint', OID.float8, f8(-7), 1, 'compare'), {
      kind: 'key',
      value: -7n,
    });
    assert.equal(convertParam('bigint', OID.float8, text('3.5'), 0, 'compare').kind, 'none');
    assert.equal(convertParam('bigint', OID.float8, text('NaN'), 0, 'compare').kind, 'none');
    assert.equal(convertParam('bigint', OID.float8, f8(2 ** 60), 1, 'compare').kind, 'unknown');
    assert.equal(convertParam('bigint', OID.float8, text('1e400'), 0, 'compare').kind, 'error');
    assert.equal(convertParam('bigint', OID.float8, text('0x10'), 0, 'compare').kind, 'unknown');
  });

  test('float8 stored: rounded half to even, out of range fails', () => {
    const v = (s: string) => convertParam('bigint', OID.float8, text(s), 0, 'assign');
    assert.deepEqual(v('3.5'), { kind: 'key', value: 4n });
    assert.deepEqual(v('2.5'), { kind: 'key', value: 2n });
    assert.deepEqual(v('-2.5'), { kind: 'key', value: -2n });
    assert.equal(v('1e300').kind, 'error');
    assert.equal(v('nan').kind, 'error');
  });

  test('numeric: exact; stored rounds half away from zero', () => {
    assert.deepEqual(convertParam('bigint', OID.numeric, text('3.000'), 0, 'compare'), {
      kind: 'key',
      value: 3n,
    });
    assert.equal(convertParam('bigint', OID.numeric, text('3.5'), 0, 'compare').kind, 'none');
    assert.deepEqual(convertParam('bigint', OID.numeric, text('2.5'), 0, 'assign'), {
      kind: 'key',
      value: 3n,
    });
    assert.deepEqual(convertParam('bigint', OID.numeric, text('-2.5'), 0, 'assign'), {
      kind: 'key',
      value: -3n,
    });
    assert.equal(convertNumericLiteral('bigint', '99999999999999999999', 'compare').kind, 'none');
    assert.equal(convertNumericLiteral('bigint', '99999999999999999999', 'assign').kind, 'error');
    assert.deepEqual(convertNumericLiteral('int', '5.0', 'compare'), { kind: 'key', value: 5n });
  });

  test('binary numeric is decoded', () => {
    assert.deepEqual(decodeNumeric(NUMERIC_12345678_9), {
      kind: 'finite',
      negative: false,
      digits: 123456789000n,
      exponent: -4,
    });
    assert.deepEqual(convertParam('bigint', OID.numeric, NUMERIC_12345678_9, 1, 'assign'), {
      kind: 'key',
      value: 12345679n,
    });
  });

  test('integers: by declared width, text strictly; a wider one matches nothing', () => {
    const b4 = Buffer.alloc(4);
    b4.writeInt32BE(-5);
    assert.deepEqual(convertParam('bigint', OID.int4, b4, 1, 'compare'), {
      kind: 'key',
      value: -5n,
    });
    assert.equal(convertParam('bigint', OID.int8, b4, 1, 'compare').kind, 'error');
    assert.equal(convertParam('bigint', 0, text('3.5'), 0, 'compare').kind, 'error');
    assert.deepEqual(convertParam('bigint', 0, text(' 7 '), 0, 'compare'), {
      kind: 'key',
      value: 7n,
    });
    assert.equal(convertParam('int', OID.int8, text('99999999999'), 0, 'compare').kind, 'none');
    assert.equal(convertParam('int', OID.int8, text('99999999999'), 0, 'assign').kind, 'error');
    assert.equal(convertParam('bigint', 16, text('t'), 0, 'compare').kind, 'unknown');
  });
});

describe('isShortInteger (the hash fast path)', () => {
  test('takes plain integers of up to 9 digits, for int and bigint keys, untyped or int4/int8', () => {
    for (const t of ['0', '7', '-5', '007', '123456789', '-999999999']) {
      for (const key of ['int', 'bigint'] as const) {
        for (const oid of [0, OID.unknown, OID.int4, OID.int8]) {
          assert.equal(isShortInteger(key, oid, text(t)), true, `${t} ${key} ${oid}`);
          // Same key as convertParam finds, and the bytes hash as that key's text.
          const c = convertParam(key, oid, text(t), 0, 'compare');
          assert.equal(c.kind, 'key');
          if (c.kind !== 'key') continue;
          assert.equal(
            hashKeyUtf8(key, text(t), 7n),
            hashKeyText(key, c.value.toString(), 7n),
            `${t} ${key} ${oid}`,
          );
        }
      }
    }
  });

  test('leaves everything else to convertParam', () => {
    for (const t of ['', '-', '1234567890', ' 1', '1 ', '+1', '1.0', '1e3', 'x'])
      assert.equal(isShortInteger('bigint', 0, text(t)), false, JSON.stringify(t));
    assert.equal(isShortInteger('smallint', 0, text('1')), false);
    assert.equal(isShortInteger('int', OID.int2, text('1')), false);
    assert.equal(isShortInteger('int', OID.numeric, text('1')), false);
    assert.equal(isShortInteger('int', OID.float8, text('1')), false);
  });
});
