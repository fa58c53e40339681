// Binary forms of values the router holds as text (what it computed: counts, sums, averages,
// expressions; or a node's text column that a client wants in binary), written exactly as
// Postgres's send functions write them. A type whose binary form its text does not determine
// exactly (a float NaN's bits, arrays and records with their element OIDs, ...) has no encoder
// here: the caller refuses it.
import { parseDecimal } from './decimal.js';
import { encodeNumeric } from './numeric-binary.js';
import {
  dateToBinary,
  parseDate,
  parseTime,
  parseTimestamp,
  timeToBinary,
  timestampToBinary,
} from './datetime.js';
import { intervalToBinary, parseInterval } from './interval.js';
import { OID, typeName } from './oids.js';
import { internal, unsupported } from './errors.js';

export type Encoder = (text: Buffer) => Buffer;

const latin1 = (v: Buffer): string => v.toString('latin1');

function integer(bytes: 2 | 4 | 8, oid: number): Encoder {
  const max = 1n << BigInt(bytes * 8 - 1);
  return (v) => {
    const n = BigInt(latin1(v));
    if (oid === OID.oid ? n < 0n || n >= 2n * max : n < -max || n >= max)
      throw internal(`${typeName(oid)} value ${n} out of range`);
    const b = Buffer.alloc(bytes);
    if (bytes === 2) b.writeInt16BE(Number(n), 0);
    else if (bytes === 4 && oid === OID.oid) b.writeUInt32BE(Number(n), 0);
    else if (bytes === 4) b.writeInt32BE(Number(n), 0);
    else b.writeBigInt64BE(n, 0);
    return b;
  };
}

const same: Encoder = (v) => v;

function uuid(v: Buffer): Buffer {
  const hex = latin1(v).replaceAll('-', '');
  if (!/^[0-9a-f]{32}$/.test(hex)) throw internal(`"${latin1(v)}" is not a uuid`);
  return Buffer.from(hex, 'hex');
}

function bytea(v: Buffer): Buffer {
  const t = latin1(v);
  if (!t.startsWith('\\x') || !/^[0-9a-f]*$/.test(t.slice(2)))
    throw unsupported(
      'bytea values can be sent in binary from several nodes only with bytea_output = hex',
    );
  return Buffer.from(t.slice(2), 'hex');
}

function char(v: Buffer): Buffer {
  if (v.length === 4 && v[0] === 0x5c) return Buffer.from([parseInt(latin1(v).slice(1), 8)]);
  return v.length === 0 ? Buffer.from([0]) : v;
}

/** The encoder of `oid`'s text into its binary form; undefined when it cannot be exact. */
export function binaryEncoder(oid: number): Encoder | undefined {
  switch (oid) {
    case OID.int2:
      return integer(2, oid);
    case OID.int4:
    case OID.oid:
      return integer(4, oid);
    case OID.int8:
      return integer(8, oid);
    case OID.numeric:
      return (v) => encodeNumeric(parseDecimal(latin1(v)));
    case OID.bool:
      return (v) => Buffer.from([v.length === 1 && v[0] === 0x74 ? 1 : 0]);
    case OID.text:
    case OID.varchar:
    case OID.bpchar:
    case OID.name:
    case OID.json:
      return same;
    case OID.char:
      return char;
    case OID.jsonb:
      return (v) => Buffer.concat([Buffer.from([1]), v]);
    case OID.uuid:
      return uuid;
    case OID.bytea:
      return bytea;
    case OID.date:
      return (v) => dateToBinary(parseDate(latin1(v)));
    case OID.timestamp:
      return (v) => timestampToBinary(parseTimestamp(latin1(v), false));
    case OID.timestamptz:
      return (v) => timestampToBinary(parseTimestamp(latin1(v), true));
    case OID.time:
      return (v) => timeToBinary(parseTime(latin1(v)));
    case OID.interval:
      return (v) => intervalToBinary(parseInterval(latin1(v)));
    default:
      return undefined;
  }
}
