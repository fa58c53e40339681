// Postgres ordering and equality of text-format values, per type OID. Merging is exact only when
// the router compares values as the nodes did; a type not listed here is refused (0A000), and text
// is ordered bytewise only under a bytewise collation (C / POSIX / C.UTF-8).
import { compareDecimal, decimalKey, parseDecimal } from './decimal.js';
import type { Decimal } from './decimal.js';
import { parseDate, parseTimestamp } from './datetime.js';
import { unsupported } from './errors.js';

export const OID = {
  bool: 16,
  bytea: 17,
  char: 18,
  name: 19,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  float4: 700,
  float8: 701,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  uuid: 2950,
} as const;

/** Decode once, then compare and hash the decoded form. */
export interface TypeOps<T = unknown> {
  readonly family: 'integer' | 'numeric' | 'float' | 'bool' | 'text' | 'bytes' | 'instant';
  decode(value: Buffer): T;
  compare(a: T, b: T): number;
  /** Equal values (as Postgres's `=`) have equal keys. */
  key(a: T): string;
}

const INTEGER: TypeOps<bigint> = {
  family: 'integer',
  decode: (v) => BigInt(v.toString('latin1')),
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  key: (a) => a.toString(),
};

const NUMERIC: TypeOps<Decimal> = {
  family: 'numeric',
  decode: (v) => parseDecimal(v.toString('latin1')),
  compare: compareDecimal,
  key: decimalKey,
};

/** float8 ordering: NaN above everything and equal to itself; -0 equals 0. */
function compareFloat(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function floatOps(single: boolean): TypeOps<number> {
  return {
    family: 'float',
    // float4 text is the shortest text that reads back as that float4; fround recovers it exactly.
    decode: (v) => {
      const n = Number(v.toString('latin1'));
      return single ? Math.fround(n) : n;
    },
    compare: compareFloat,
    key: (a) => (Number.isNaN(a) ? 'NaN' : a === 0 ? '0' : String(a)),
  };
}

const BOOL: TypeOps<boolean> = {
  family: 'bool',
  decode: (v) => v.length === 1 && v[0] === 0x74, // 't'
  compare: (a, b) => Number(a) - Number(b),
  key: (a) => (a ? 't' : 'f'),
};

const BYTES: TypeOps<Buffer> = {
  family: 'bytes',
  decode: (v) => v,
  compare: (a, b) => Buffer.compare(a, b),
  key: (a) => a.toString('latin1'),
};

// bpchar compares and hashes without its trailing blanks (its text output is padded).
const BPCHAR: TypeOps<Buffer> = {
  ...BYTES,
  decode: (v) => {
    let end = v.length;
    while (end > 0 && v[end - 1] === 0x20) end--;
    return v.subarray(0, end);
  },
};

const INSTANT = (parse: (text: string) => bigint): TypeOps<bigint> => ({
  family: 'instant',
  decode: (v) => parse(v.toString('latin1')),
  compare: INTEGER.compare,
  key: INTEGER.key,
});

const BYTEA: TypeOps<Buffer> = {
  ...BYTES,
  decode: (v) => {
    // Hex output (`\x0a1b`): lower-case hex order is byte order. Escape output is refused.
    if (v.length < 2 || v[0] !== 0x5c || v[1] !== 0x78)
      throw unsupported('bytea values can be merged across nodes only with bytea_output = hex');
    return v;
  },
};

const TIME: TypeOps<Buffer> = {
  ...BYTES,
  decode: (v) => {
    if (!/^\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(v.toString('latin1')))
      throw unsupported(`time value "${v.toString('latin1')}" is not in ISO format`);
    return v;
  },
};

/** Types whose ordering depends on the collation. */
const COLLATABLE = new Set<number>([OID.text, OID.varchar, OID.bpchar]);

function typeName(oid: number): string {
  for (const [name, value] of Object.entries(OID)) if (value === oid) return name;
  return `OID ${oid}`;
}

/**
 * Operations for `oid`. `purpose` says what they are for: ordering text needs a bytewise collation
 * (`bytewiseText`); equality of text is bytewise under every deterministic collation.
 */
export function typeOps(
  oid: number,
  purpose: 'order' | 'equality',
  bytewiseText: boolean,
): TypeOps {
  if (purpose === 'order' && COLLATABLE.has(oid) && !bytewiseText)
    throw unsupported(
      `ordering ${typeName(oid)} values across nodes needs a bytewise collation (C, POSIX or C.UTF-8)`,
    );
  switch (oid) {
    case OID.int2:
    case OID.int4:
    case OID.int8:
    case OID.oid:
      return INTEGER as TypeOps;
    case OID.numeric:
      return NUMERIC as TypeOps;
    case OID.float4:
      return floatOps(true) as TypeOps;
    case OID.float8:
      return floatOps(false) as TypeOps;
    case OID.bool:
      return BOOL as TypeOps;
    case OID.text:
    case OID.varchar:
    case OID.name: // name always uses the C collation
    case OID.char:
    case OID.uuid:
      return BYTES as TypeOps;
    case OID.bpchar:
      return BPCHAR as TypeOps;
    case OID.bytea:
      return BYTEA as TypeOps;
    case OID.time:
      return TIME as TypeOps;
    case OID.date:
      return INSTANT(parseDate) as TypeOps;
    case OID.timestamp:
      return INSTANT((t) => parseTimestamp(t, false)) as TypeOps;
    case OID.timestamptz:
      return INSTANT((t) => parseTimestamp(t, true)) as TypeOps;
    default:
      throw unsupported(
        `values of type ${typeName(oid)} cannot be ${purpose === 'order' ? 'ordered' : 'compared'} across nodes`,
      );
  }
}

export function isNumericFamily(oid: number): boolean {
  return oid === OID.int2 || oid === OID.int4 || oid === OID.int8 || oid === OID.numeric;
}

/** A composite key of several columns (null-aware, unambiguous). */
export function rowKey(parts: readonly (string | null)[]): string {
  let out = '';
  for (const p of parts) out += p === null ? 'N|' : `${p.length}:${p}|`;
  return out;
}
