// numeric's binary form, as numeric_send writes it and numeric_recv reads it: int16 ndigits,
// int16 weight (of the first base-10000 digit), uint16 sign, int16 dscale, then the base-10000
// digits, most significant first. A stored numeric has no leading or trailing zero digits (zero
// has none at all, weight 0, positive sign); NaN and the infinities are a sign word alone.
import type { Decimal } from './decimal.js';
import { internal } from './errors.js';

const SIGN_POS = 0x0000;
const SIGN_NEG = 0x4000;
const SIGN_NAN = 0xc000;
const SIGN_PINF = 0xd000;
const SIGN_NINF = 0xf000;
const NBASE = 10000n;

function malformed(): never {
  throw internal('a node sent a malformed binary numeric value');
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** The value numeric_send wrote (digits hidden beyond dscale are truncated, as numeric_recv does). */
export function decodeNumeric(b: Buffer): Decimal {
  if (b.length < 8) malformed();
  const ndigits = b.readInt16BE(0);
  const weight = b.readInt16BE(2);
  const sign = b.readUInt16BE(4);
  const dscale = b.readInt16BE(6);
  if (ndigits < 0 || dscale < 0 || b.length !== 8 + 2 * ndigits) malformed();
  if (sign === SIGN_NAN) return { kind: 'nan' };
  if (sign === SIGN_PINF) return { kind: 'inf', negative: false };
  if (sign === SIGN_NINF) return { kind: 'inf', negative: true };
  if (sign !== SIGN_POS && sign !== SIGN_NEG) malformed();
  let digits = 0n;
  for (let i = 0; i < ndigits; i++) {
    const d = b.readUInt16BE(8 + 2 * i);
    if (d > 9999) malformed();
    digits = digits * NBASE + BigInt(d);
  }
  // The last digit is worth 10000^(weight - ndigits + 1); the value scaled by 10^dscale:
  const shift = 4 * (weight - ndigits + 1) + dscale;
  const scaled = shift >= 0 ? digits * pow10(shift) : digits / pow10(-shift);
  return { kind: 'finite', digits: sign === SIGN_NEG ? -scaled : scaled, scale: dscale };
}

function header(ndigits: number, weight: number, sign: number, dscale: number): Buffer {
  const b = Buffer.alloc(8 + 2 * ndigits);
  b.writeInt16BE(ndigits, 0);
  b.writeInt16BE(weight, 2);
  b.writeUInt16BE(sign, 4);
  b.writeInt16BE(dscale, 6);
  return b;
}

/** The bytes numeric_send writes for `d`. */
export function encodeNumeric(d: Decimal): Buffer {
  if (d.kind === 'nan') return header(0, 0, SIGN_NAN, 0);
  // An infinity's stored header has the bits numeric_send reads as dscale 32 (0x1000 >> 7).
  if (d.kind === 'inf') return header(0, 0, d.negative ? SIGN_NINF : SIGN_PINF, 32);
  const negative = d.digits < 0n;
  const abs = negative ? -d.digits : d.digits;
  if (abs === 0n) return header(0, 0, SIGN_POS, d.scale);
  // Pad the fraction to whole base-10000 digits, so the groups line up with the decimal point.
  const pad = (4 - (d.scale % 4)) % 4;
  let rest = abs * pow10(pad);
  const fractionGroups = (d.scale + pad) / 4;
  const groups: number[] = [];
  while (rest > 0n) {
    groups.push(Number(rest % NBASE));
    rest /= NBASE;
  }
  groups.reverse();
  const weight = groups.length - 1 - fractionGroups;
  let n = groups.length;
  while (n > 0 && groups[n - 1] === 0) n--;
  const b = header(n, weight, negative ? SIGN_NEG : SIGN_POS, d.scale);
  for (let i = 0; i < n; i++) b.writeUInt16BE(groups[i] as number, 8 + 2 * i);
  return b;
}
