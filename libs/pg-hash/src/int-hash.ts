// hashint2extended / hashint4extended / hashint8extended: every integer width folds to one
// uint32 first, so equal values of int2, int4 and int8 hash alike (Postgres' cross-type joins).
import { invalidSyntax, outOfRange } from './errors.js';
import { hashUint32Extended } from './jenkins.js';

/** hashint2extended(v, seed). Throws KeyValueError unless v is an integer in smallint range. */
export function hashInt2Extended(v: number, seed: bigint): bigint {
  if (v !== (v << 16) >> 16) throw notAnInteger(v, 'smallint');
  return hashUint32Extended(v, seed);
}

/** hashint4extended(v, seed). Throws KeyValueError unless v is an integer in int range. */
export function hashInt4Extended(v: number, seed: bigint): bigint {
  if (v !== (v | 0)) throw notAnInteger(v, 'integer');
  return hashUint32Extended(v, seed);
}

/** hashint8extended(v, seed). Throws KeyValueError unless v is in bigint range. */
export function hashInt8Extended(v: bigint, seed: bigint): bigint {
  if (BigInt.asIntN(64, v) !== v) throw outOfRange(String(v), 'bigint');
  const lo = Number(BigInt.asUintN(32, v)) | 0;
  const hi = Number(BigInt.asIntN(32, v >> 32n)) | 0;
  return hashInt8HalvesExtended(hi, lo, seed);
}

/**
 * hashint8extended for the int8 whose two's-complement halves are hi and lo (each taken as 32
 * bits): the low half is xored with the high half, or with its complement when negative.
 */
export function hashInt8HalvesExtended(hi: number, lo: number, seed: bigint): bigint {
  const h = hi | 0;
  const folded = lo ^ (h >= 0 ? h : ~h);
  return hashUint32Extended(folded, seed);
}

function notAnInteger(v: number, typeName: string) {
  return Number.isInteger(v) ? outOfRange(String(v), typeName) : invalidSyntax(String(v), typeName);
}
