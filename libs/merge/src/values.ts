// One column value read in the format its field says (0 text, 1 binary, as the node sent it):
// integers, numerics, booleans and text for the accumulators, expressions and HAVING.
import type { FieldDescription } from './types.js';
import type { Decimal } from './decimal.js';
import { fromBigInt, parseDecimal } from './decimal.js';
import { decodeNumeric } from './numeric-binary.js';
import { OID, typeName } from './oids.js';
import { internal } from './errors.js';

function width(v: Buffer, bytes: number, oid: number): Buffer {
  if (v.length !== bytes)
    throw internal(`a node sent a binary ${typeName(oid)} value of ${v.length} bytes`);
  return v;
}

/** A binary int2 / int4 / int8 / oid. */
export function integerFromBinary(v: Buffer, oid: number): bigint {
  switch (oid) {
    case OID.int2:
      return BigInt(width(v, 2, oid).readInt16BE(0));
    case OID.int4:
      return BigInt(width(v, 4, oid).readInt32BE(0));
    case OID.int8:
      return width(v, 8, oid).readBigInt64BE(0);
    case OID.oid:
      return BigInt(width(v, 4, oid).readUInt32BE(0));
    default:
      throw internal(`${typeName(oid)} is not an integer type`);
  }
}

export function readInteger(v: Buffer, f: FieldDescription): bigint {
  return f.format === 0 ? BigInt(v.toString('latin1')) : integerFromBinary(v, f.typeOid);
}

/** An integer or numeric value as an exact decimal. */
export function readDecimal(v: Buffer, f: FieldDescription): Decimal {
  if (f.typeOid !== OID.numeric) return fromBigInt(readInteger(v, f));
  return f.format === 0 ? parseDecimal(v.toString('latin1')) : decodeNumeric(v);
}

export function readBool(v: Buffer, f: FieldDescription): boolean {
  return f.format === 0 ? v.length === 1 && v[0] === 0x74 : width(v, 1, OID.bool)[0] !== 0;
}

/** text / varchar / name: the same bytes in both formats (textsend is the text itself). */
export function readText(v: Buffer): string {
  return v.toString('utf8');
}
