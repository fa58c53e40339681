// Turning the values that pin a shard key (constants in the SQL, bind parameters in text or
// binary form, array parameters of `= ANY($n)`) into hashes, exactly as Postgres would hash them.
import { hashKeyBinary, hashKeyText, hashKeyUtf8, type KeyType } from '@tessera/pg-hash';
import { parseArrayLiteral, type PinValue, type RowValue } from '@tessera/sql';

/** One bind parameter as the Bind carried it (see pg-wire's bindParam). */
export interface ParamBytes {
  readonly value: Buffer | null;
  /** 0 text, 1 binary. */
  readonly format: number;
}

/** Parameters of the statement being routed; undefined before the Bind is known. */
export type ParamSource = (index: number) => ParamBytes | undefined;

/** `null` key: matches no row (`= NULL`) or is an SQL NULL in a VALUES row. */
export type KeyHash = bigint | null;

/** The hashes of `values`, 'unpinnable' if one cannot be known exactly, 'params' if it needs a Bind. */
export type KeyHashes = readonly KeyHash[] | 'unpinnable' | 'params';

const INTEGER_KEYS: ReadonlySet<KeyType> = new Set(['bigint', 'int', 'smallint']);

export function hashPinValues(
  values: readonly (PinValue | RowValue)[],
  keyType: KeyType,
  seed: bigint,
  params: ParamSource | undefined,
): KeyHashes {
  const out: KeyHash[] = [];
  for (const v of values) {
    switch (v.kind) {
      case 'const': {
        if (v.text === null) {
          out.push(null);
          break;
        }
        // A numeric like 5.0 compares equal to an integer key without being one: not pinnable.
        if (INTEGER_KEYS.has(keyType) && v.literal !== 'integer' && v.literal !== 'string')
          return 'unpinnable';
        if (v.literal === 'boolean' || v.literal === 'bitstring') return 'unpinnable';
        out.push(hashKeyText(keyType, v.text, seed));
        break;
      }
      case 'param': {
        if (params === undefined) return 'params';
        const p = params(v.index);
        if (p === undefined) return 'unpinnable';
        if (p.value === null) {
          out.push(null);
          break;
        }
        if (v.isArray) {
          const items = arrayItems(p);
          if (items === undefined) return 'unpinnable';
          for (const item of items) out.push(item === null ? null : hashItem(keyType, item, seed));
        } else {
          out.push(hashParam(keyType, p.value, p.format, seed));
        }
        break;
      }
      default:
        return 'unpinnable';
    }
  }
  return out;
}

/** A scalar parameter's hash; binary integers of any width hash as their value (as in Postgres). */
export function hashParam(keyType: KeyType, value: Buffer, format: number, seed: bigint): bigint {
  if (format === 0) return hashKeyUtf8(keyType, value, seed);
  if (
    INTEGER_KEYS.has(keyType) &&
    (value.length === 2 || value.length === 4 || value.length === 8)
  ) {
    return hashKeyText(keyType, readBinaryInt(value).toString(), seed);
  }
  return hashKeyBinary(keyType, value, seed);
}

type ArrayItem = { text: string } | { bytes: Buffer };

function hashItem(keyType: KeyType, item: ArrayItem, seed: bigint): bigint {
  return 'text' in item
    ? hashKeyText(keyType, item.text, seed)
    : hashParam(keyType, item.bytes, 1, seed);
}

function readBinaryInt(b: Buffer): bigint {
  switch (b.length) {
    case 2:
      return BigInt(b.readInt16BE(0));
    case 4:
      return BigInt(b.readInt32BE(0));
    default:
      return b.readBigInt64BE(0);
  }
}

/** Elements of an array parameter (text literal or binary array_send format); undefined if unsure. */
function arrayItems(p: ParamBytes): (ArrayItem | null)[] | undefined {
  const value = p.value as Buffer;
  if (p.format === 0) {
    const items = parseArrayLiteral(value.toString('utf8'));
    return items?.map((t) => (t === null ? null : { text: t }));
  }
  // Binary: ndim, hasnull flag, element oid, then (dim, lbound) per dimension, then elements.
  if (value.length < 12) return undefined;
  const ndim = value.readInt32BE(0);
  if (ndim === 0) return [];
  if (ndim !== 1 || value.length < 20) return undefined;
  const n = value.readInt32BE(12);
  let at = 20;
  const out: (ArrayItem | null)[] = [];
  for (let i = 0; i < n; i++) {
    if (value.length - at < 4) return undefined;
    const len = value.readInt32BE(at);
    at += 4;
    if (len === -1) {
      out.push(null);
      continue;
    }
    if (len < 0 || value.length - at < len) return undefined;
    out.push({ bytes: value.subarray(at, at + len) });
    at += len;
  }
  return out;
}
