// Date, timestamp and time values, text (DateStyle ISO only) or binary, turned into comparable
// instants, and instants written in binary as date_send / timestamp_send / time_send write them.
// timestamptz is compared as UTC microseconds because its printed offset may change (daylight
// saving) between rows; text in any other DateStyle is refused rather than compared by guesswork.
import { internal, unsupported } from './errors.js';

const DAY_MICROS = 86_400_000_000n;
// Outside every representable date: ±infinity sort at the ends, as in Postgres.
const INFINITY = 1n << 100n;
// Binary dates and timestamps count from 2000-01-01 (POSTGRES_EPOCH_JDATE), these from 1970.
const EPOCH_2000_DAYS = 10_957n;
const EPOCH_2000_MICROS = EPOCH_2000_DAYS * DAY_MICROS;
const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

const DATE = /^(\d{4,})-(\d{2})-(\d{2})( BC)?$/;
const TIMESTAMP =
  /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:([+-])(\d{2})(?::(\d{2})(?::(\d{2}))?)?)?( BC)?$/;

/** Days from 1970-01-01 of a proleptic Gregorian date (astronomical year numbering). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function yearOf(text: string, bc: string | undefined): number {
  const y = Number(text);
  return bc === undefined ? y : 1 - y;
}

function special(text: string): bigint | undefined {
  if (text === 'infinity') return INFINITY;
  if (text === '-infinity') return -INFINITY;
  return undefined;
}

function notIso(type: string, text: string): never {
  throw unsupported(
    `${type} value "${text}" is not in ISO DateStyle; set DateStyle to ISO to merge it across nodes`,
  );
}

/** A date as days since 1970-01-01 (bigint so that ±infinity fit). */
export function parseDate(text: string): bigint {
  const s = special(text);
  if (s !== undefined) return s;
  const m = DATE.exec(text);
  if (m === null) return notIso('date', text);
  return BigInt(daysFromCivil(yearOf(m[1] ?? '', m[4]), Number(m[2]), Number(m[3])));
}

/** A timestamp (with or without time zone) as microseconds since 1970-01-01 00:00 (UTC if zoned). */
export function parseTimestamp(text: string, zoned: boolean): bigint {
  const s = special(text);
  if (s !== undefined) return s;
  const m = TIMESTAMP.exec(text);
  const type = zoned ? 'timestamptz' : 'timestamp';
  if (m === null || (m[8] !== undefined) !== zoned) return notIso(type, text);
  const days = daysFromCivil(yearOf(m[1] ?? '', m[12]), Number(m[2]), Number(m[3]));
  const seconds = Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6]);
  const micros = BigInt((m[7] ?? '').padEnd(6, '0') || '0');
  let value = BigInt(days) * DAY_MICROS + BigInt(seconds) * 1_000_000n + micros;
  if (zoned) {
    const offset = Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0);
    value -= BigInt(m[8] === '-' ? -offset : offset) * 1_000_000n;
  }
  return value;
}

function sized(b: Buffer, bytes: number, type: string): Buffer {
  if (b.length !== bytes) throw internal(`a node sent a binary ${type} value of ${b.length} bytes`);
  return b;
}

/** A binary date (int32 days since 2000-01-01, ±infinity at the int32 ends) as parseDate's value. */
export function dateFromBinary(b: Buffer): bigint {
  const days = BigInt(sized(b, 4, 'date').readInt32BE(0));
  if (days === INT32_MAX) return INFINITY;
  if (days === INT32_MIN) return -INFINITY;
  return days + EPOCH_2000_DAYS;
}

export function dateToBinary(days: bigint): Buffer {
  const b = Buffer.alloc(4);
  const v = days === INFINITY ? INT32_MAX : days === -INFINITY ? INT32_MIN : days - EPOCH_2000_DAYS;
  b.writeInt32BE(Number(v), 0);
  return b;
}

/** A binary timestamp[tz] (int64 microseconds since 2000-01-01 [UTC]) as parseTimestamp's value. */
export function timestampFromBinary(b: Buffer): bigint {
  const micros = sized(b, 8, 'timestamp').readBigInt64BE(0);
  if (micros === INT64_MAX) return INFINITY;
  if (micros === INT64_MIN) return -INFINITY;
  return micros + EPOCH_2000_MICROS;
}

export function timestampToBinary(micros: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(
    micros === INFINITY ? INT64_MAX : micros === -INFINITY ? INT64_MIN : micros - EPOCH_2000_MICROS,
    0,
  );
  return b;
}

/** time text (HH:MM:SS[.ffffff], the only form time_out prints) as microseconds since midnight. */
export function parseTime(text: string): bigint {
  const m = TIME.exec(text);
  if (m === null) throw unsupported(`time value "${text}" is not in ISO format`);
  const seconds = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  return BigInt(seconds) * 1_000_000n + BigInt((m[4] ?? '').padEnd(6, '0') || '0');
}

export function timeFromBinary(b: Buffer): bigint {
  return sized(b, 8, 'time').readBigInt64BE(0);
}

export function timeToBinary(micros: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(micros, 0);
  return b;
}
