// Postgres ordering and equality of column values, per type OID and format (text or binary, as
// the node sent the column). Both formats of a type decode to the same value, so a column can be
// compared with a HAVING literal given as text. Merging is exact only when the router compares
// values as the nodes did; a type not listed here is refused (0A000), and text is ordered bytewise
// only under a bytewise collation (C / POSIX / C.UTF-8).
import { compareDecimal, decimalKey, parseDecimal } from './decimal.js';
import { decodeNumeric } from './numeric-binary.js';
import {
  dateFromBinary,
  parseDate,
  parseTime,
  parseTimestamp,
  timeFromBinary,
  timestampFromBinary,
} from './datetime.js';
import { intervalFromBinary, intervalSpan, parseInterval } from './interval.js';
import { compareJsonb, jsonbFromBinary, jsonbKey, parseJsonb } from './jsonb.js';
import type { Json } from './jsonb.js';
import { integerFromBinary } from './values.js';
import { OID, typeName } from './oids.js';
import { unsupported } from './errors.js';

export { OID, isNumericFamily } from './oids.js';

/** Decode once, then compare and hash the decoded form. */
export interface TypeOps<T = unknown> {
  decode(value: Buffer): T;
  compare(a: T, b: T): number;
  /** Equal values (as Postgres's `=`) have equal keys. */
  key(a: T): string;
}

type Decode<T> = (value: Buffer) => T;

/** Text and binary decoders of one type, and how its values compare. */
interface TypeDef<T> {
  readonly text: Decode<T>;
  readonly binary: Decode<T>;
  readonly compare: (a: T, b: T) => number;
  readonly key: (a: T) => string;
}

const latin1 = (v: Buffer): string => v.toString('latin1');
const compareBigInt = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
const bigintKey = (a: bigint): string => a.toString();

function integer(oid: number): TypeDef<bigint> {
  return {
    text: (v) => BigInt(latin1(v)),
    binary: (v) => integerFromBinary(v, oid),
    compare: compareBigInt,
    key: bigintKey,
  };
}

const NUMERIC: TypeDef<ReturnType<typeof parseDecimal>> = {
  text: (v) => parseDecimal(latin1(v)),
  binary: decodeNumeric,
  compare: compareDecimal,
  key: decimalKey,
};

/** float8 ordering: NaN above everything and equal to itself; -0 equals 0. */
function compareFloat(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function float(single: boolean): TypeDef<number> {
  const bytes = single ? 4 : 8;
  return {
    // float4 text is the shortest text that reads back as that float4; fround recovers it exactly.
    text: (v) => {
      const n = Number(latin1(v));
      return single ? Math.fround(n) : n;
    },
    binary: (v) => {
      if (v.length !== bytes)
        throw unsupported(`a binary float value of ${v.length} bytes cannot be compared`);
      return single ? v.readFloatBE(0) : v.readDoubleBE(0);
    },
    compare: compareFloat,
    key: (a) => (Number.isNaN(a) ? 'NaN' : a === 0 ? '0' : String(a)),
  };
}

const BOOL: TypeDef<boolean> = {
  text: (v) => v.length === 1 && v[0] === 0x74, // 't'
  binary: (v) => v.length === 1 && v[0] !== 0,
  compare: (a, b) => Number(a) - Number(b),
  key: (a) => (a ? 't' : 'f'),
};

const identity = (v: Buffer): Buffer => v;

/** Values whose binary form is their text (textsend, namesend, charsend). */
const BYTES: TypeDef<Buffer> = {
  text: identity,
  binary: identity,
  compare: (a, b) => Buffer.compare(a, b),
  key: (a) => a.toString('latin1'),
};

function trimBlanks(v: Buffer): Buffer {
  let end = v.length;
  while (end > 0 && v[end - 1] === 0x20) end--;
  return v.subarray(0, end);
}

// "char": one byte, compared unsigned; charout prints a byte above 127 as \ooo, and 0 as ''.
const CHAR: TypeDef<Buffer> = {
  ...BYTES,
  text: (v) => {
    if (v.length === 0) return Buffer.from([0]);
    return v.length === 4 && v[0] === 0x5c ? Buffer.from([parseInt(latin1(v).slice(1), 8)]) : v;
  },
};

// bpchar compares and hashes without its trailing blanks (both forms carry the padding).
const BPCHAR: TypeDef<Buffer> = { ...BYTES, text: trimBlanks, binary: trimBlanks };

// uuid: its 16 bytes (uuid_cmp is memcmp, the order of its lower-case hex text too).
const UUID: TypeDef<Buffer> = {
  ...BYTES,
  text: (v) => {
    const hex = latin1(v).replaceAll('-', '');
    if (!/^[0-9a-f]{32}$/.test(hex)) throw unsupported(`"${latin1(v)}" is not a uuid`);
    return Buffer.from(hex, 'hex');
  },
  binary: (v) => {
    if (v.length !== 16) throw unsupported(`a binary uuid of ${v.length} bytes cannot be compared`);
    return v;
  },
};

// bytea: its bytes. Text in hex output (`\x0a1b`); escape output is refused.
const BYTEA: TypeDef<Buffer> = {
  ...BYTES,
  text: (v) => {
    if (v.length < 2 || v[0] !== 0x5c || v[1] !== 0x78 || !/^[0-9a-f]*$/.test(latin1(v).slice(2)))
      throw unsupported('bytea values can be merged across nodes only with bytea_output = hex');
    return Buffer.from(latin1(v).slice(2), 'hex');
  },
  binary: identity,
};

function instant(text: (t: string) => bigint, binary: Decode<bigint>): TypeDef<bigint> {
  return { text: (v) => text(latin1(v)), binary, compare: compareBigInt, key: bigintKey };
}

const INTERVAL: TypeDef<bigint> = instant(
  (t) => intervalSpan(parseInterval(t)),
  (v) => intervalSpan(intervalFromBinary(v)),
);

const JSONB: TypeDef<Json> = {
  text: (v) => parseJsonb(v.toString('utf8')),
  binary: (v) => parseJsonb(jsonbFromBinary(v)),
  compare: compareJsonb,
  key: jsonbKey,
};

/** Types whose ordering depends on the collation. */
const COLLATABLE = new Set<number>([OID.text, OID.varchar, OID.bpchar, OID.jsonb]);

function definition(oid: number): TypeDef<unknown> | undefined {
  switch (oid) {
    case OID.int2:
    case OID.int4:
    case OID.int8:
    case OID.oid:
      return integer(oid) as TypeDef<unknown>;
    case OID.numeric:
      return NUMERIC as TypeDef<unknown>;
    case OID.float4:
      return float(true) as TypeDef<unknown>;
    case OID.float8:
      return float(false) as TypeDef<unknown>;
    case OID.bool:
      return BOOL as TypeDef<unknown>;
    case OID.text:
    case OID.varchar:
    case OID.name: // name always uses the C collation
      return BYTES as TypeDef<unknown>;
    case OID.char:
      return CHAR as TypeDef<unknown>;
    case OID.bpchar:
      return BPCHAR as TypeDef<unknown>;
    case OID.uuid:
      return UUID as TypeDef<unknown>;
    case OID.bytea:
      return BYTEA as TypeDef<unknown>;
    case OID.time:
      return instant(parseTime, timeFromBinary) as TypeDef<unknown>;
    case OID.date:
      return instant(parseDate, dateFromBinary) as TypeDef<unknown>;
    case OID.timestamp:
      return instant((t) => parseTimestamp(t, false), timestampFromBinary) as TypeDef<unknown>;
    case OID.timestamptz:
      return instant((t) => parseTimestamp(t, true), timestampFromBinary) as TypeDef<unknown>;
    case OID.interval:
      return INTERVAL as TypeDef<unknown>;
    case OID.jsonb:
      return JSONB as TypeDef<unknown>;
    default:
      return undefined;
  }
}

/**
 * Operations for values of `oid` in `format` (0 text, 1 binary). `purpose` says what they are for:
 * ordering text needs a bytewise collation (`bytewiseText`); equality of text is bytewise under
 * every deterministic collation.
 */
export function typeOps(
  oid: number,
  purpose: 'order' | 'equality',
  bytewiseText: boolean,
  format = 0,
): TypeOps {
  if (purpose === 'order' && COLLATABLE.has(oid) && !bytewiseText)
    throw unsupported(
      `ordering ${typeName(oid)} values across nodes needs a bytewise collation (C, POSIX or C.UTF-8)`,
    );
  const def = definition(oid);
  if (def === undefined)
    throw unsupported(
      `values of type ${typeName(oid)} cannot be ${purpose === 'order' ? 'ordered' : 'compared'} across nodes`,
    );
  return { decode: format === 0 ? def.text : def.binary, compare: def.compare, key: def.key };
}

/** A composite key of several columns (null-aware, unambiguous). */
export function rowKey(parts: readonly (string | null)[]): string {
  let out = '';
  for (const p of parts) out += p === null ? 'N|' : `${p.length}:${p}|`;
  return out;
}
