// Exact decimals with Postgres numeric semantics, on BigInt (never floats): parsing numeric text,
// NaN / ±Infinity, addition keeping the largest display scale, ordering (NaN above everything),
// and division with numeric.c's select_div_scale and rounding half away from zero.
import { MergeError, SQLSTATE_INVALID_TEXT_REPRESENTATION } from './errors.js';

export type Decimal =
  | { readonly kind: 'finite'; readonly digits: bigint; readonly scale: number }
  | { readonly kind: 'nan' }
  | { readonly kind: 'inf'; readonly negative: boolean };

const NAN: Decimal = { kind: 'nan' };
const POS_INF: Decimal = { kind: 'inf', negative: false };
const NEG_INF: Decimal = { kind: 'inf', negative: true };

// numeric.h: DEC_DIGITS, NUMERIC_MIN_SIG_DIGITS, NUMERIC_MIN/MAX_DISPLAY_SCALE.
const DEC_DIGITS = 4;
const NUMERIC_MIN_SIG_DIGITS = 16;
const NUMERIC_MIN_DISPLAY_SCALE = 0;
const NUMERIC_MAX_DISPLAY_SCALE = 1000;

const NUMBER = /^\s*([-+]?)(\d*)(?:\.(\d*))?\s*$/;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Parses numeric (or integer) text as Postgres prints it; also accepts a leading `+`. */
export function parseDecimal(text: string): Decimal {
  const t = text.trim();
  if (t === 'NaN') return NAN;
  if (t === 'Infinity' || t === '+Infinity') return POS_INF;
  if (t === '-Infinity') return NEG_INF;
  const m = NUMBER.exec(t);
  const int = m?.[2] ?? '';
  const frac = m?.[3] ?? '';
  if (m === null || (int === '' && frac === ''))
    throw new MergeError(
      SQLSTATE_INVALID_TEXT_REPRESENTATION,
      `invalid input syntax for type numeric: "${text}"`,
    );
  const magnitude = BigInt((int === '' ? '0' : int) + frac);
  return { kind: 'finite', digits: m[1] === '-' ? -magnitude : magnitude, scale: frac.length };
}

export function fromBigInt(v: bigint): Decimal {
  return { kind: 'finite', digits: v, scale: 0 };
}

/** The text Postgres prints: exactly `scale` fractional digits, no negative zero. */
export function formatDecimal(d: Decimal): string {
  if (d.kind === 'nan') return 'NaN';
  if (d.kind === 'inf') return d.negative ? '-Infinity' : 'Infinity';
  const negative = d.digits < 0n;
  let s = (negative ? -d.digits : d.digits).toString();
  if (d.scale > 0) {
    s = s.padStart(d.scale + 1, '0');
    s = `${s.slice(0, s.length - d.scale)}.${s.slice(s.length - d.scale)}`;
  }
  return negative ? `-${s}` : s;
}

function align(a: bigint, as: number, bs: number): bigint {
  return bs > as ? a * pow10(bs - as) : a;
}

/** Total order of numeric: -Infinity < finite < Infinity < NaN (NaN equals NaN). */
export function compareDecimal(a: Decimal, b: Decimal): number {
  const rank = (d: Decimal) => (d.kind === 'nan' ? 3 : d.kind === 'inf' ? (d.negative ? 0 : 2) : 1);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb || a.kind !== 'finite' || b.kind !== 'finite') return ra - rb;
  const x = align(a.digits, a.scale, b.scale);
  const y = align(b.digits, b.scale, a.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Equal values give equal keys (1.50 and 1.5 are one value, as for GROUP BY / DISTINCT). */
export function decimalKey(d: Decimal): string {
  if (d.kind !== 'finite') return formatDecimal(d);
  let digits = d.digits;
  let scale = d.scale;
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale--;
  }
  return `${digits}e-${scale}`;
}

/** Sum with the larger display scale; special values as numeric_add / numeric sum. */
export function addDecimal(a: Decimal, b: Decimal): Decimal {
  if (a.kind === 'nan' || b.kind === 'nan') return NAN;
  if (a.kind === 'inf' && b.kind === 'inf') return a.negative === b.negative ? a : NAN;
  if (a.kind === 'inf') return a;
  if (b.kind === 'inf') return b;
  const scale = Math.max(a.scale, b.scale);
  return {
    kind: 'finite',
    digits: align(a.digits, a.scale, scale) + align(b.digits, b.scale, scale),
    scale,
  };
}

/** Weight (base-10000 digit position) and value of the first non-zero NBASE digit. */
function weightAndFirstDigit(digits: bigint, scale: number): [number, bigint] {
  const abs = digits < 0n ? -digits : digits;
  if (abs === 0n) return [0, 0n];
  const exponent = abs.toString().length - 1 - scale; // of the leading decimal digit
  const weight = Math.floor(exponent / DEC_DIGITS);
  const shift = scale + weight * DEC_DIGITS;
  const first = shift >= 0 ? abs / pow10(shift) : abs * pow10(-shift);
  return [weight, first];
}

/** numeric.c select_div_scale: enough digits for NUMERIC_MIN_SIG_DIGITS significant digits. */
export function selectDivScale(d1: bigint, dscale1: number, d2: bigint, dscale2: number): number {
  const [weight1, first1] = weightAndFirstDigit(d1, dscale1);
  const [weight2, first2] = weightAndFirstDigit(d2, dscale2);
  let qweight = weight1 - weight2;
  if (first1 <= first2) qweight--;
  let rscale = NUMERIC_MIN_SIG_DIGITS - qweight * DEC_DIGITS;
  rscale = Math.max(rscale, dscale1, dscale2, NUMERIC_MIN_DISPLAY_SCALE);
  return Math.min(rscale, NUMERIC_MAX_DISPLAY_SCALE);
}

/**
 * a / b as numeric_div computes it (b finite and non-zero): result scale from select_div_scale,
 * exact quotient rounded half away from zero at that scale.
 */
export function divideDecimal(a: Decimal, b: Decimal & { kind: 'finite' }): Decimal {
  if (a.kind === 'nan') return NAN;
  if (a.kind === 'inf') return b.digits < 0n ? { kind: 'inf', negative: !a.negative } : a;
  const rscale = selectDivScale(a.digits, a.scale, b.digits, b.scale);
  // a/b = (a.digits / 10^a.scale) / (b.digits / 10^b.scale); scaled by 10^rscale.
  const numerator = a.digits * pow10(b.scale + rscale);
  const denominator = b.digits * pow10(a.scale);
  let q = numerator / denominator;
  const r = numerator % denominator;
  const absR = r < 0n ? -r : r;
  const absD = denominator < 0n ? -denominator : denominator;
  if (2n * absR >= absD) q += numerator < 0n !== denominator < 0n ? -1n : 1n;
  return { kind: 'finite', digits: q, scale: rscale };
}
