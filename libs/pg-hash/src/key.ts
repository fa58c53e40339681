// A shard key as the router meets it (text in a query or text bind parameter, or a binary bind
// parameter), validated as Postgres would and hashed with the function of its key type.
import { invalidBinary } from './errors.js';
import { parseInt2, parseInt4, parseInt8Into, type Int8Halves } from './int-parse.js';
import { hashInt8HalvesExtended } from './int-hash.js';
import { hashUint32Extended } from './jenkins.js';
import { hashTextExtended } from './text-hash.js';
import { hashUuidExtended } from './uuid.js';

/** The key types a keyspace can have, by their SQL names. */
export type KeyType = 'bigint' | 'int' | 'smallint' | 'text' | 'uuid';

const int8: Int8Halves = { hi: 0, lo: 0 };
const utf8 = new TextDecoder();
const TWO_POW_32 = 2 ** 32;

/**
 * The hash of a key given in Postgres text form. Throws KeyValueError (SQLSTATE 22P02 or 22003,
 * Postgres' message) for a value the key type's input function would reject.
 */
export function hashKeyText(keyType: KeyType, text: string, seed: bigint): bigint {
  switch (keyType) {
    case 'bigint':
      parseInt8Into(text, int8);
      return hashInt8HalvesExtended(int8.hi, int8.lo, seed);
    case 'int':
      return hashUint32Extended(parseInt4(text), seed);
    case 'smallint':
      return hashUint32Extended(parseInt2(text), seed);
    case 'text':
      return hashTextExtended(text, seed);
    case 'uuid':
      return hashUuidExtended(text, seed);
    default:
      return assertNever(keyType);
  }
}

/**
 * hashKeyText of a key given as UTF-8 bytes (a text-format bind parameter). An integer in the
 * shape drivers send (an optional minus and at most 15 ASCII digits, in range) is read from the
 * bytes themselves; anything else is decoded and goes through hashKeyText: same hashes, same
 * errors, without a string for the common case.
 */
export function hashKeyUtf8(keyType: KeyType, bytes: Uint8Array, seed: bigint): bigint {
  if (keyType === 'bigint' || keyType === 'int' || keyType === 'smallint') {
    const v = plainInteger(bytes);
    if (v !== undefined) {
      if (keyType === 'bigint') {
        const hi = Math.floor(v / TWO_POW_32);
        return hashInt8HalvesExtended(hi | 0, (v - hi * TWO_POW_32) | 0, seed);
      }
      const limit = keyType === 'int' ? 2 ** 31 : 2 ** 15;
      if (v >= -limit && v < limit) return hashUint32Extended(v | 0, seed);
    }
  }
  return hashKeyText(keyType, utf8.decode(bytes), seed);
}

/** `-?[0-9]{1,15}` as a number (exact in a double), or undefined for any other bytes. */
function plainInteger(b: Uint8Array): number | undefined {
  const n = b.length;
  let i = n > 0 && b[0] === 0x2d ? 1 : 0;
  if (i === n || n - i > 15) return undefined;
  let v = 0;
  for (; i < n; i++) {
    const d = b[i]! - 0x30;
    if (d < 0 || d > 9) return undefined;
    v = v * 10 + d;
  }
  return b[0] === 0x2d ? -v : v;
}

/**
 * The hash of a key given as a binary-format parameter: big-endian int2/int4/int8, the 16 bytes
 * of a uuid, the UTF-8 bytes of a text. Throws KeyValueError (22P03) for a wrong length.
 */
export function hashKeyBinary(keyType: KeyType, bytes: Uint8Array, seed: bigint): bigint {
  switch (keyType) {
    case 'bigint':
      if (bytes.length !== 8) throw invalidBinary('bigint', 8, bytes.length);
      return hashInt8HalvesExtended(readInt32BE(bytes, 0), readInt32BE(bytes, 4), seed);
    case 'int':
      if (bytes.length !== 4) throw invalidBinary('integer', 4, bytes.length);
      return hashUint32Extended(readInt32BE(bytes, 0), seed);
    case 'smallint':
      if (bytes.length !== 2) throw invalidBinary('smallint', 2, bytes.length);
      // Sign-extended, as Postgres widens int16 to int32 before hashing.
      return hashUint32Extended((((bytes[0]! << 8) | bytes[1]!) << 16) >> 16, seed);
    case 'text':
      return hashTextExtended(bytes, seed);
    case 'uuid':
      return hashUuidExtended(bytes, seed);
    default:
      return assertNever(keyType);
  }
}

function readInt32BE(b: Uint8Array, i: number): number {
  return (b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!;
}

function assertNever(x: never): never {
  throw new TypeError(`unknown key type ${String(x)}`);
}
