// The value an integer shard key is pinned to by a parameter or literal of another type, exactly
// as Postgres would compare or store it. `key = $1` with $1 float8 compares in float8 (the key
// is cast: id::float8 = $1), with $1 numeric in numeric; an INSERT's value is assigned with the
// column's cast (float8 -> int8 rounds half to even, numeric -> int8 half away from zero). Pure.

/** Type OIDs of the parameters routing converts. */
export const OID = {
  unspecified: 0,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  float4: 700,
  float8: 701,
  unknown: 705,
  numeric: 1700,
} as const;

/** `compare`: a WHERE / ON equality; `assign`: a value stored in the key column (INSERT). */
export type KeyContext = 'compare' | 'assign';

export type Converted =
  /** The key's value. */
  | { readonly kind: 'key'; readonly value: bigint }
  /** No key equals it (a fractional number, NaN, out of range in a comparison). */
  | { readonly kind: 'none' }
  /** Postgres fails it the same way on any node (bad syntax, out of range on assignment). */
  | { readonly kind: 'error' }
  /** The router cannot know the key exactly. */
  | { readonly kind: 'unknown' };

const KEY: Record<'bigint' | 'int' | 'smallint', { lo: bigint; hi: bigint }> = {
  bigint: { lo: -(2n ** 63n), hi: 2n ** 63n - 1n },
  int: { lo: -(2n ** 31n), hi: 2n ** 31n - 1n },
  smallint: { lo: -(2n ** 15n), hi: 2n ** 15n - 1n },
};

export type IntegerKeyType = keyof typeof KEY;

const INT_TEXT = /^\s*([+-]?\d+)\s*$/;
const FLOAT_TEXT = /^\s*[+-]?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?|nan|inf|infinity)\s*$/i;
const NUMERIC_TEXT = /^\s*([+-])?(?:(\d+)\.?(\d*)|\.(\d+))(?:e([+-]?\d+))?\s*$/i;
const NUMERIC_SPECIAL = /^\s*(?:nan|[+-]?inf|[+-]?infinity)\s*$/i;

/** A parameter of type `oid` (0: the node infers the key's own type) for an integer key. */
export function convertParam(
  keyType: IntegerKeyType,
  oid: number,
  value: Buffer,
  format: number,
  context: KeyContext,
): Converted {
  switch (oid) {
    case OID.unspecified:
    case OID.unknown:
    case OID.int8:
    case OID.int4:
    case OID.int2: {
      if (format === 0) {
        const m = INT_TEXT.exec(value.toString('utf8'));
        // Postgres fails bad input for an integer type at Bind (22P02, 22003), wherever it runs.
        if (m === null) return { kind: 'error' };
        return integer(keyType, BigInt(m[1]!), oid, context);
      }
      const width = oid === OID.int2 ? 2 : oid === OID.int4 ? 4 : oid === OID.int8 ? 8 : 0;
      if (width !== 0 && value.length !== width) return { kind: 'error' };
      if (value.length === 2) return integer(keyType, BigInt(value.readInt16BE(0)), oid, context);
      if (value.length === 4) return integer(keyType, BigInt(value.readInt32BE(0)), oid, context);
      if (value.length === 8) return integer(keyType, value.readBigInt64BE(0), oid, context);
      return { kind: 'error' };
    }
    case OID.float8:
    case OID.float4: {
      let x: number;
      if (format === 0) {
        const text = value.toString('utf8');
        if (!FLOAT_TEXT.test(text)) return { kind: 'unknown' };
        x = parseFloatText(text);
        // float8in fails overflow and underflow to zero (22003), wherever it runs.
        if (
          !/n/i.test(text) &&
          (!Number.isFinite(x) || (x === 0 && /[1-9]/.test(text.split(/e/i)[0]!)))
        )
          return { kind: 'error' };
        // float4in rounds the decimal to float32 once; a value not exactly a float32 would be
        // rounded twice here (decimal -> double -> float): not known exactly.
        if (oid === OID.float4 && Number.isFinite(x) && Math.fround(x) !== x)
          return { kind: 'unknown' };
      } else if (oid === OID.float8 && value.length === 8) {
        x = value.readDoubleBE(0);
      } else if (oid === OID.float4 && value.length === 4) {
        x = value.readFloatBE(0);
      } else {
        return { kind: 'error' };
      }
      return fromFloat(keyType, x, context);
    }
    case OID.numeric: {
      const n = format === 0 ? parseNumericText(value.toString('utf8')) : decodeNumeric(value);
      if (n === undefined) return format === 0 ? { kind: 'error' } : { kind: 'unknown' };
      return fromNumeric(keyType, n, context);
    }
    default:
      return { kind: 'unknown' };
  }
}

/**
 * Whether a text parameter of type `oid` is `-?[0-9]{1,9}` for an int or bigint key: a value
 * both types hold, so convertParam would find it as written (leading zeros aside) and its hash
 * is the bytes' own. Any other shape, smallint keys and int2 parameters go through convertParam.
 */
export function isShortInteger(keyType: IntegerKeyType, oid: number, b: Uint8Array): boolean {
  if (keyType === 'smallint') return false;
  if (oid !== OID.unspecified && oid !== OID.unknown && oid !== OID.int4 && oid !== OID.int8)
    return false;
  const n = b.length;
  let i = n > 0 && b[0] === 0x2d ? 1 : 0;
  if (i === n || n - i > 9) return false;
  for (; i < n; i++) {
    const c = b[i]!;
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** A numeric literal (`3.0`, `99999999999999999999`) for an integer key. */
export function convertNumericLiteral(
  keyType: IntegerKeyType,
  text: string,
  context: KeyContext,
): Converted {
  const n = parseNumericText(text);
  return n === undefined ? { kind: 'unknown' } : fromNumeric(keyType, n, context);
}

/** An integer of type `oid` (0: the key's own type) for the key. */
function integer(keyType: IntegerKeyType, v: bigint, oid: number, context: KeyContext): Converted {
  const own = KEY[keyType];
  const typed =
    oid === OID.int2
      ? KEY.smallint
      : oid === OID.int4
        ? KEY.int
        : oid === OID.int8
          ? KEY.bigint
          : own;
  if (v < typed.lo || v > typed.hi) return { kind: 'error' }; // the input function's 22003
  if (v >= own.lo && v <= own.hi) return { kind: 'key', value: v };
  // A wider integer: compared across types it equals no key; stored, it is out of range.
  return context === 'compare' ? { kind: 'none' } : { kind: 'error' };
}

function fromFloat(keyType: IntegerKeyType, x: number, context: KeyContext): Converted {
  const own = KEY[keyType];
  if (context === 'assign') {
    // float8 -> integer: rint (half to even), then a range check (22003); NaN and inf fail too.
    if (!Number.isFinite(x)) return { kind: 'error' };
    const r = roundHalfEven(x);
    const v = BigInt(r);
    return v >= own.lo && v <= own.hi ? { kind: 'key', value: v } : { kind: 'error' };
  }
  // key::float8 = x: no integer equals a fraction, NaN or an infinity.
  if (!Number.isFinite(x) || !Number.isInteger(x)) return { kind: 'none' };
  // Past 2^53 several integers become the same double.
  if (Math.abs(x) > 2 ** 53) return { kind: 'unknown' };
  const v = BigInt(x);
  return v >= own.lo && v <= own.hi ? { kind: 'key', value: v } : { kind: 'none' };
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

/** An exact decimal: `digits` x 10^`exponent`, or a special value. */
type Numeric =
  | {
      readonly kind: 'finite';
      readonly negative: boolean;
      readonly digits: bigint;
      readonly exponent: number;
    }
  | { readonly kind: 'special' };

function fromNumeric(keyType: IntegerKeyType, n: Numeric, context: KeyContext): Converted {
  const own = KEY[keyType];
  if (n.kind === 'special') return context === 'compare' ? { kind: 'none' } : { kind: 'error' };
  let v: bigint;
  if (n.exponent >= 0) {
    v = n.digits * 10n ** BigInt(n.exponent);
  } else {
    const scale = 10n ** BigInt(-n.exponent);
    const whole = n.digits / scale;
    const rest = n.digits % scale;
    if (rest !== 0n) {
      if (context === 'compare') return { kind: 'none' };
      // numeric -> integer rounds half away from zero.
      v = rest * 2n >= scale ? whole + 1n : whole;
    } else {
      v = whole;
    }
  }
  if (n.negative) v = -v;
  if (v >= own.lo && v <= own.hi) return { kind: 'key', value: v };
  return context === 'compare' ? { kind: 'none' } : { kind: 'error' };
}

function parseFloatText(text: string): number {
  const t = text.trim().toLowerCase();
  const sign = t.startsWith('-') ? -1 : 1;
  const body = t.replace(/^[+-]/, '');
  if (body === 'nan') return NaN;
  if (body === 'inf' || body === 'infinity') return sign * Infinity;
  return Number(t);
}

/** numeric_in's syntax; undefined for what it rejects. */
export function parseNumericText(text: string): Numeric | undefined {
  if (NUMERIC_SPECIAL.test(text)) return { kind: 'special' };
  const m = NUMERIC_TEXT.exec(text);
  if (m === null) return undefined;
  const [, sign, intPart, fracAfterInt, fracOnly, exp] = m;
  const whole = intPart ?? '';
  const frac = fracOnly ?? fracAfterInt ?? '';
  const e = exp === undefined ? 0 : Number(exp);
  if (!Number.isSafeInteger(e) || Math.abs(e) > 1000) return undefined;
  return {
    kind: 'finite',
    negative: sign === '-',
    digits: BigInt((whole + frac).replace(/^0+(?=\d)/, '') || '0'),
    exponent: e - frac.length,
  };
}

/** numeric_send's format: ndigits, weight, sign, dscale, then base-10000 digits. */
export function decodeNumeric(b: Buffer): Numeric | undefined {
  if (b.length < 8) return undefined;
  const ndigits = b.readInt16BE(0);
  const weight = b.readInt16BE(2);
  const sign = b.readUInt16BE(4);
  if (ndigits < 0 || b.length !== 8 + 2 * ndigits) return undefined;
  if (sign === 0xc000 || sign === 0xd000 || sign === 0xf000) return { kind: 'special' };
  if (sign !== 0 && sign !== 0x4000) return undefined;
  let digits = 0n;
  for (let i = 0; i < ndigits; i++) {
    const d = b.readInt16BE(8 + 2 * i);
    if (d < 0 || d > 9999) return undefined;
    digits = digits * 10000n + BigInt(d);
  }
  // The first digit is worth 10000^weight; the last, 10000^(weight - ndigits + 1).
  return {
    kind: 'finite',
    negative: sign === 0x4000,
    digits,
    exponent: 4 * (weight - ndigits + 1),
  };
}
