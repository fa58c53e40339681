// Date and timestamp text (DateStyle ISO only) turned into comparable instants. timestamptz is
// compared as UTC microseconds because its printed offset may change (daylight saving) between
// rows; text in any other DateStyle is refused rather than compared by guesswork.
import { unsupported } from './errors.js';

const DAY_MICROS = 86_400_000_000n;
// Outside every representable date: ±infinity sort at the ends, as in Postgres.
const INFINITY = 1n << 100n;

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
