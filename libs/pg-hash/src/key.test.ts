// hashKeyText / hashKeyBinary without a server: Postgres' errors and SQLSTATEs for bad keys,
// known values taken from Postgres 15, and the cross-width equality of integer hashes.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import {
  hashBytesExtended,
  hashInt2Extended,
  hashInt4Extended,
  hashInt8Extended,
  hashKeyBinary,
  hashKeyText,
  hashKeyUtf8,
  hashTextExtended,
  hashUuidExtended,
  KeyValueError,
  type KeyType,
} from './index.js';

function expectKeyError(fn: () => unknown, sqlstate: string, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KeyValueError, `expected KeyValueError, got ${String(e)}`);
    assert.equal(e.sqlstate, sqlstate);
    assert.equal(e.code, 'KEY_VALUE_INVALID');
    assert.equal(e.message, message);
    return true;
  });
}

test('values computed by Postgres 15 itself', () => {
  assert.equal(hashInt4Extended(0, 0n), 4154612158245552303n);
  assert.equal(hashInt4Extended(42, 42n), 826591455424871831n);
  assert.equal(hashInt8Extended(-5n, -7046029254386353131n), 4731646573907279184n);
  assert.equal(hashInt2Extended(-1, 3n), -8246732482095048772n);
  assert.equal(hashTextExtended('hello world!x', 0n), -6683131005855957752n);
  assert.equal(hashTextExtended('héllo', 42n), 8741200099159613028n);
  assert.equal(hashUuidExtended('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 7n), -7831945923156934305n);
});

test('equal integers of any width hash alike, through every entry point', () => {
  const seeds = [0n, 1n, -1n, 42n, 2n ** 63n - 1n, -(2n ** 63n)];
  for (const v of [0, 1, -1, 2, -2, 127, -128, 32767, -32768]) {
    for (const seed of seeds) {
      const h = hashInt8Extended(BigInt(v), seed);
      assert.equal(hashInt4Extended(v, seed), h);
      assert.equal(hashInt2Extended(v, seed), h);
      for (const kt of ['bigint', 'int', 'smallint'] as const)
        assert.equal(hashKeyText(kt, String(v), seed), h);
    }
  }
});

test('a seed and its unsigned 64-bit twin are the same seed', () => {
  assert.equal(hashInt4Extended(7, -1n), hashInt4Extended(7, 2n ** 64n - 1n));
  assert.equal(hashTextExtended('k', -42n), hashTextExtended('k', 2n ** 64n - 42n));
});

test('hashKeyText accepts what int2in/int4in/int8in accept', () => {
  const h = (kt: KeyType, t: string) => hashKeyText(kt, t, 9n);
  assert.equal(h('bigint', ' \t\n+42 \r\f\v'), hashInt8Extended(42n, 9n));
  assert.equal(h('bigint', '-0'), hashInt8Extended(0n, 9n));
  assert.equal(h('bigint', '007'), hashInt8Extended(7n, 9n));
  assert.equal(h('bigint', '-9223372036854775808'), hashInt8Extended(-(2n ** 63n), 9n));
  assert.equal(h('bigint', '9223372036854775807'), hashInt8Extended(2n ** 63n - 1n, 9n));
  assert.equal(h('bigint', '-4294967296'), hashInt8Extended(-4294967296n, 9n));
  assert.equal(h('bigint', '4294967295'), hashInt8Extended(4294967295n, 9n));
  assert.equal(h('int', '-2147483648'), hashInt4Extended(-2147483648, 9n));
  assert.equal(h('int', ' 2147483647 '), hashInt4Extended(2147483647, 9n));
  assert.equal(h('smallint', '-32768'), hashInt2Extended(-32768, 9n));
  assert.equal(h('smallint', '+32767'), hashInt2Extended(32767, 9n));
  assert.equal(
    h('uuid', '{A0EEBC999C0B4EF8BB6D6BB9BD380A11}'),
    h('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
  );
  assert.equal(
    h('uuid', 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11'),
    h('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
  );
  assert.equal(h('text', ' 42 '), hashTextExtended(' 42 ', 9n));
});

test('hashKeyText rejects out-of-range integers with 22003 and Postgres message', () => {
  const cases: [KeyType, string, string][] = [
    ['smallint', '99999', 'smallint'],
    ['smallint', '32768', 'smallint'],
    ['smallint', '-32769', 'smallint'],
    ['int', '2147483648', 'integer'],
    ['int', '-2147483649', 'integer'],
    ['bigint', '9223372036854775808', 'bigint'],
    ['bigint', '-9223372036854775809', 'bigint'],
    ['bigint', '18446744073709551616', 'bigint'],
    // Postgres stops at the digit that overflows, before it sees the trailing junk.
    ['bigint', '99999999999999999999abc', 'bigint'],
    ['int', ' 99999999999 x', 'integer'],
  ];
  for (const [kt, text, typeName] of cases) {
    expectKeyError(
      () => hashKeyText(kt, text, 0n),
      '22003',
      `value "${text}" is out of range for type ${typeName}`,
    );
  }
});

test('hashKeyText rejects malformed keys with 22P02 and Postgres message', () => {
  const cases: [KeyType, string, string][] = [
    ['bigint', 'abc', 'bigint'],
    ['bigint', '', 'bigint'],
    ['bigint', '   ', 'bigint'],
    ['bigint', '-', 'bigint'],
    ['bigint', '+-1', 'bigint'],
    ['bigint', '1.0', 'bigint'],
    ['bigint', '1e3', 'bigint'],
    ['bigint', '0x10', 'bigint'],
    ['bigint', '1_000', 'bigint'],
    ['bigint', '1 2', 'bigint'],
    ['bigint', '12\u0000', 'bigint'],
    ['bigint', '\u00a012', 'bigint'],
    // 2^63 itself does not overflow the (negative) accumulator, so the junk is seen first.
    ['bigint', '9223372036854775808abc', 'bigint'],
    ['int', '42abc', 'integer'],
    ['smallint', '٣', 'smallint'],
    ['uuid', '', 'uuid'],
    ['uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1', 'uuid'],
    ['uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111', 'uuid'],
    ['uuid', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'uuid'],
    ['uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', 'uuid'],
    ['uuid', 'a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11', 'uuid'],
    ['uuid', 'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11', 'uuid'],
    ['uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-', 'uuid'],
    ['uuid', ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'uuid'],
    ['uuid', 'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'uuid'],
  ];
  for (const [kt, text, typeName] of cases) {
    expectKeyError(
      () => hashKeyText(kt, text, 0n),
      '22P02',
      `invalid input syntax for type ${typeName}: "${text}"`,
    );
  }
});

test('typed hash functions refuse numbers outside their type', () => {
  expectKeyError(
    () => hashInt2Extended(40000, 0n),
    '22003',
    'value "40000" is out of range for type smallint',
  );
  expectKeyError(
    () => hashInt4Extended(2 ** 31, 0n),
    '22003',
    'value "2147483648" is out of range for type integer',
  );
  expectKeyError(
    () => hashInt4Extended(1.5, 0n),
    '22P02',
    'invalid input syntax for type integer: "1.5"',
  );
  expectKeyError(
    () => hashInt4Extended(NaN, 0n),
    '22P02',
    'invalid input syntax for type integer: "NaN"',
  );
  expectKeyError(
    () => hashInt8Extended(2n ** 63n, 0n),
    '22003',
    'value "9223372036854775808" is out of range for type bigint',
  );
});

test('hashKeyBinary reads big-endian integers, uuid bytes and UTF-8 text', () => {
  const seed = 5n;
  assert.equal(
    hashKeyBinary('smallint', Uint8Array.of(0xff, 0xfe), seed),
    hashInt2Extended(-2, seed),
  );
  assert.equal(
    hashKeyBinary('int', Uint8Array.of(0x80, 0, 0, 0), seed),
    hashInt4Extended(-(2 ** 31), seed),
  );
  assert.equal(
    hashKeyBinary('bigint', Uint8Array.of(0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 1), seed),
    hashInt8Extended(-(2n ** 33n) + 1n, seed),
  );
  const uuid = Uint8Array.from(Buffer.from('a0eebc999c0b4ef8bb6d6bb9bd380a11', 'hex'));
  assert.equal(
    hashKeyBinary('uuid', uuid, seed),
    hashUuidExtended('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', seed),
  );
  assert.equal(
    hashKeyBinary('text', new TextEncoder().encode('ключ'), seed),
    hashTextExtended('ключ', seed),
  );
  // A view into a larger buffer hashes only its own bytes.
  const framed = Uint8Array.of(9, 9, 0, 0, 0, 42, 9).subarray(2, 6);
  assert.equal(hashKeyBinary('int', framed, seed), hashInt4Extended(42, seed));
});

test('hashKeyBinary rejects a wrong length with 22P03', () => {
  const cases: [KeyType, number, string][] = [
    ['smallint', 3, 'smallint'],
    ['int', 2, 'integer'],
    ['bigint', 4, 'bigint'],
    ['uuid', 15, 'uuid'],
  ];
  for (const [kt, length, typeName] of cases) {
    const expected = kt === 'smallint' ? 2 : kt === 'int' ? 4 : kt === 'bigint' ? 8 : 16;
    expectKeyError(
      () => hashKeyBinary(kt, new Uint8Array(length), 0n),
      '22P03',
      `incorrect binary data format for type ${typeName}: expected ${expected} bytes, got ${length}`,
    );
  }
});

test('string keys hash as their UTF-8 bytes on both encoding paths, lone surrogates as U+FFFD', () => {
  const encoder = new TextEncoder();
  let state = 12345;
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const pools = [
    [0x20, 0x7f],
    [0x80, 0x7ff],
    [0x800, 0xffff],
    [0xd800, 0xdfff],
  ] as const;
  for (let n = 0; n < 3000; n++) {
    const length = n % 400;
    let s = '';
    for (let i = 0; i < length; i++) {
      const [lo, hi] = pools[Math.floor(random() * pools.length)]!;
      s += String.fromCharCode(lo + Math.floor(random() * (hi - lo + 1)));
    }
    const seed = BigInt(n) - 1500n;
    assert.equal(
      hashTextExtended(s, seed),
      hashBytesExtended(encoder.encode(s), seed),
      `string #${n}`,
    );
  }
  assert.equal(hashTextExtended('\ud800x', 0n), hashTextExtended('\ufffdx', 0n));
  assert.equal(hashTextExtended('x\udc00', 0n), hashTextExtended('x\ufffd', 0n));
  const huge = '€'.repeat(100_000);
  assert.equal(hashTextExtended(huge, 1n), hashBytesExtended(encoder.encode(huge), 1n));
});

test('hashKeyUtf8 agrees with hashKeyText on the bytes of the same text, errors included', () => {
  const texts = [
    '0',
    '-0',
    '7',
    '007',
    '-1',
    '42',
    '-42',
    '32767',
    '32768',
    '-32768',
    '-32769',
    '2147483647',
    '2147483648',
    '-2147483648',
    '-2147483649',
    '999999999999999',
    '-999999999999999',
    '1000000000000000',
    '4294967296',
    '-4294967296',
    '4294967295',
    '9223372036854775807',
    '9223372036854775808',
    '-9223372036854775808',
    ' 5',
    '5 ',
    '+5',
    '-',
    '',
    '1e3',
    '5.0',
    '0x10',
    '١٢',
    'abc',
    'héllo',
    '12a',
  ];
  for (let i = 0; i < 2000; i++) {
    const digits = 1 + Math.floor(Math.random() * 18);
    let t = Math.random() < 0.5 ? '-' : '';
    for (let d = 0; d < digits; d++) t += String(Math.floor(Math.random() * 10));
    texts.push(t);
  }
  const outcome = (f: () => bigint): string => {
    try {
      return String(f());
    } catch (e) {
      return e instanceof KeyValueError ? `${e.sqlstate} ${e.message}` : `other ${String(e)}`;
    }
  };
  for (const keyType of ['bigint', 'int', 'smallint', 'text', 'uuid'] as const) {
    for (const seed of [0n, 5n]) {
      for (const text of texts) {
        assert.equal(
          outcome(() => hashKeyUtf8(keyType, Buffer.from(text, 'utf8'), seed)),
          outcome(() => hashKeyText(keyType, text, seed)),
          `${keyType} ${JSON.stringify(text)} seed ${seed}`,
        );
      }
    }
  }
});
