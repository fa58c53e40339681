// Turning the values that pin a shard key (constants in the SQL, bind parameters in text or
// binary form, array parameters of `= ANY($n)`) into hashes, exactly as Postgres would hash them.
import { hashKeyBinary, hashKeyText, hashKeyUtf8, type KeyType } from '@tessera/pg-hash';
import { bindParam } from '@tessera/pg-wire';
import { parseArrayLiteral, type PinValue, type RowValue } from '@tessera/sql';
import {
  OID,
  convertNumericLiteral,
  convertParam,
  isShortInteger,
  type Converted,
  type IntegerKeyType,
  type KeyContext,
} from './key-convert.js';

/** One bind parameter as the Bind carried it (see pg-wire's bindParam). */
export interface ParamBytes {
  readonly value: Buffer | null;
  /** 0 text, 1 binary. */
  readonly format: number;
  /** The type the statement's Parse declared for it; 0 or absent: the node infers it. */
  readonly type?: number;
}

/** Parameters of the statement being routed; undefined before the Bind is known. */
export type ParamSource = (index: number) => ParamBytes | undefined;

/** The parameters of a Bind of a statement whose Parse declared `types`. */
export function typedParams(bind: Buffer, types: readonly number[]): ParamSource {
  return (i) => {
    const p = bindParam(bind, i);
    const type = types[i] ?? 0;
    return p === undefined || type === 0 ? p : { value: p.value, format: p.format, type };
  };
}

/** `null` key: matches no row (`= NULL`) or is an SQL NULL in a VALUES row. */
export type KeyHash = bigint | null;

/** The hashes of `values`, 'unpinnable' if one cannot be known exactly, 'params' if it needs a Bind. */
export type KeyHashes = readonly KeyHash[] | 'unpinnable' | 'params';

const INTEGER_KEYS: ReadonlySet<KeyType> = new Set(['bigint', 'int', 'smallint']);

function isIntegerKey(k: KeyType): k is IntegerKeyType {
  return INTEGER_KEYS.has(k);
}

/** Casts of a parameter (`$1::int8`) that keep an integer an integer. */
const INTEGER_CASTS = new Set(['int8', 'bigint', 'int4', 'int', 'integer', 'int2', 'smallint']);

/** The type OIDs a text or uuid key's parameter may be declared with (0: the node infers it). */
const OWN_TYPES: Partial<Record<KeyType, ReadonlySet<number>>> = {
  text: new Set([0, OID.unknown, OID.text, 1043]),
  uuid: new Set([0, OID.unknown, 2950]),
};

/**
 * A converted key's hash: `null` matches no row; a value Postgres fails on any node goes to a
 * fixed one (its error is the answer); one not known exactly cannot pin.
 */
function convertedHash(c: Converted, keyType: KeyType, seed: bigint): KeyHash | 'unpinnable' {
  switch (c.kind) {
    case 'key':
      return hashKeyText(keyType, c.value.toString(), seed);
    case 'none':
      return null;
    case 'error':
      return 0n;
    case 'unknown':
      return 'unpinnable';
  }
}

/**
 * `context`: how Postgres meets the value with the key: compared (WHERE, ON) or assigned to the
 * key column (INSERT), which convert a float or numeric differently.
 */
export function hashPinValues(
  values: readonly (PinValue | RowValue)[],
  keyType: KeyType,
  seed: bigint,
  params: ParamSource | undefined,
  context: KeyContext = 'compare',
): KeyHashes {
  const out: KeyHash[] = [];
  for (const v of values) {
    switch (v.kind) {
      case 'const': {
        if (v.text === null) {
          out.push(null);
          break;
        }
        if (v.literal === 'boolean' || v.literal === 'bitstring') return 'unpinnable';
        if (isIntegerKey(keyType) && (v.literal === 'integer' || v.literal === 'numeric')) {
          // 5.0 and 99999999999999999999 are numeric constants: compared (or stored) as such.
          const c = convertNumericLiteral(keyType, v.text, context);
          const h = convertedHash(c, keyType, seed);
          if (h === 'unpinnable') return h;
          out.push(h);
          break;
        }
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
        } else if (isIntegerKey(keyType)) {
          if (v.typeName !== undefined && !INTEGER_CASTS.has(v.typeName.toLowerCase()))
            return 'unpinnable';
          // What drivers send most: a short plain integer in text, hashed from its bytes.
          if (p.format === 0 && isShortInteger(keyType, p.type ?? 0, p.value)) {
            out.push(hashKeyUtf8(keyType, p.value, seed));
            break;
          }
          const c = convertParam(keyType, p.type ?? 0, p.value, p.format, context);
          const h = convertedHash(c, keyType, seed);
          if (h === 'unpinnable') return h;
          out.push(h);
        } else {
          // A text or uuid key takes a parameter of its own type (or one the node infers).
          if (p.type !== undefined && OWN_TYPES[keyType]?.has(p.type) !== true) return 'unpinnable';
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
