// interval values, text (IntervalStyle postgres, the default) or binary (interval_send: int64
// microseconds, int32 days, int32 months). Postgres compares and groups intervals by their span,
// a month counted as 30 days and a day as 24 hours (interval_cmp_value): '1 mon' = '30 days'.
import { internal, unsupported } from './errors.js';

const DAY_MICROS = 86_400_000_000n;

export interface Interval {
  readonly micros: bigint;
  readonly days: bigint;
  readonly months: bigint;
}

/** What interval_cmp compares. */
export function intervalSpan(i: Interval): bigint {
  return i.micros + (i.days + i.months * 30n) * DAY_MICROS;
}

const NUMBER = /^[+-]?\d+$/;
const UNIT: Record<string, 'year' | 'mon' | 'day'> = {
  year: 'year',
  years: 'year',
  mon: 'mon',
  mons: 'mon',
  day: 'day',
  days: 'day',
};
const CLOCK = /^([+-]?)(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

function notPostgresStyle(text: string): never {
  throw unsupported(
    `interval value "${text}" is not in IntervalStyle postgres; set IntervalStyle to postgres to merge it across nodes`,
  );
}

/** interval_out's text in IntervalStyle postgres: `1 year -2 mons +3 days -04:05:06.5`. */
export function parseInterval(text: string): Interval {
  const tokens = text.split(' ');
  let months = 0n;
  let days = 0n;
  let micros = 0n;
  const seen = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] ?? '';
    const unit = UNIT[tokens[i + 1] ?? ''];
    if (NUMBER.test(t) && unit !== undefined && !seen.has(unit)) {
      seen.add(unit);
      const v = BigInt(t);
      if (unit === 'year') months += v * 12n;
      else if (unit === 'mon') months += v;
      else days += v;
      i++;
      continue;
    }
    const clock = CLOCK.exec(t);
    if (clock === null || i !== tokens.length - 1) return notPostgresStyle(text);
    const seconds =
      BigInt(clock[2] ?? '0') * 3600n + BigInt(clock[3] ?? '0') * 60n + BigInt(clock[4] ?? '0');
    const magnitude = seconds * 1_000_000n + BigInt((clock[5] ?? '').padEnd(6, '0') || '0');
    micros = clock[1] === '-' ? -magnitude : magnitude;
  }
  return { micros, days, months };
}

export function intervalFromBinary(b: Buffer): Interval {
  if (b.length !== 16) throw internal(`a node sent a binary interval value of ${b.length} bytes`);
  return {
    micros: b.readBigInt64BE(0),
    days: BigInt(b.readInt32BE(8)),
    months: BigInt(b.readInt32BE(12)),
  };
}

export function intervalToBinary(i: Interval): Buffer {
  const b = Buffer.alloc(16);
  b.writeBigInt64BE(i.micros, 0);
  b.writeInt32BE(Number(i.days), 8);
  b.writeInt32BE(Number(i.months), 12);
  return b;
}
