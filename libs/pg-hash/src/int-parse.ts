// Integer key text as Postgres 15's int2in/int4in/int8in read it (pg_strtoint16/32/64): optional
// surrounding whitespace, an optional sign, decimal digits only; same errors, same precedence.
import { invalidSyntax, outOfRange } from './errors.js';

const TWO_POW_31 = 2 ** 31;
const TWO_POW_MINUS_32 = 2 ** -32;

/** C isspace() in the C locale. */
function isSpace(ch: number): boolean {
  return ch === 0x20 || (ch >= 0x09 && ch <= 0x0d);
}

function isDigit(ch: number): boolean {
  return ch >= 0x30 && ch <= 0x39;
}

/** Parses int2 (limit 2^15) or int4 (limit 2^31) text. */
function parseSmallInt(text: string, limit: number, typeName: string): number {
  const n = text.length;
  let i = 0;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  let neg = false;
  const sign = text.charCodeAt(i);
  if (sign === 0x2d) {
    neg = true;
    i++;
  } else if (sign === 0x2b) {
    i++;
  }
  if (!isDigit(text.charCodeAt(i))) throw invalidSyntax(text, typeName);
  let magnitude = 0;
  for (let ch = text.charCodeAt(i); isDigit(ch); ch = text.charCodeAt(++i)) {
    magnitude = magnitude * 10 + (ch - 0x30);
    // Postgres stops at the first digit that overflows, before looking at what follows.
    if (magnitude > limit) throw outOfRange(text, typeName);
  }
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (i !== n) throw invalidSyntax(text, typeName);
  if (neg) return -magnitude | 0;
  if (magnitude === limit) throw outOfRange(text, typeName);
  return magnitude;
}

/** int2in: the smallint a text reads as, or KeyValueError. */
export function parseInt2(text: string): number {
  return parseSmallInt(text, 2 ** 15, 'smallint');
}

/** int4in: the integer a text reads as, or KeyValueError. */
export function parseInt4(text: string): number {
  return parseSmallInt(text, TWO_POW_31, 'integer');
}

/** An int8 as two's-complement 32-bit halves (hi signed, lo as int32 bits). */
export interface Int8Halves {
  hi: number;
  lo: number;
}

/**
 * int8in without BigInt: fills `out` with the halves of the bigint a text reads as, or throws
 * KeyValueError. The magnitude is accumulated in two 32-bit limbs held exactly in doubles.
 */
export function parseInt8Into(text: string, out: Int8Halves): void {
  const n = text.length;
  let i = 0;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  let neg = false;
  const sign = text.charCodeAt(i);
  if (sign === 0x2d) {
    neg = true;
    i++;
  } else if (sign === 0x2b) {
    i++;
  }
  if (!isDigit(text.charCodeAt(i))) throw invalidSyntax(text, 'bigint');
  let hi = 0;
  let lo = 0;
  for (let ch = text.charCodeAt(i); isDigit(ch); ch = text.charCodeAt(++i)) {
    // t < 2^36 is exact in a double; >>> 0 takes it mod 2^32 without a floating-point modulo.
    const t = lo * 10 + (ch - 0x30);
    lo = t >>> 0;
    hi = hi * 10 + (t - lo) * TWO_POW_MINUS_32;
    if (hi > TWO_POW_31 || (hi === TWO_POW_31 && lo > 0)) throw outOfRange(text, 'bigint');
  }
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (i !== n) throw invalidSyntax(text, 'bigint');
  if (neg) {
    out.lo = -lo | 0;
    out.hi = lo === 0 ? -hi | 0 : ~hi;
  } else {
    if (hi === TWO_POW_31) throw outOfRange(text, 'bigint');
    out.lo = lo | 0;
    out.hi = hi;
  }
}
