// Equivalence with a real Postgres 15: over a million generated values per key type, every
// extended hash computed here must equal what the server returns, for a zero and non-zero seeds.
import { test, before, after } from 'node:test';
import { strict as assert } from 'node:assert';
import type pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import {
  hashInt2Extended,
  hashInt4Extended,
  hashInt8Extended,
  hashKeyBinary,
  hashKeyText,
  hashTextExtended,
  hashUuidExtended,
} from './index.js';

/** Every row is checked against all three; a zero seed takes Postgres' unseeded path. */
const SEEDS = [0n, 42n, -7046029254386353131n] as const;
const BATCH = 100_000;

/** One way of computing a value's hash in TypeScript, from the value's text as Postgres prints it. */
type Path = (text: string, seed: bigint) => bigint;

interface Source {
  /** SQL yielding column `v` for `i` in [$1, $2]. */
  sql: string;
  count: number;
}

interface TypeCase {
  sqlFunction: string;
  sources: Source[];
  paths: Record<string, Path>;
}

interface Mismatch {
  path: string;
  value: string;
  seed: bigint;
  expected: bigint;
  got: bigint | string;
}

function series(expr: string, count: number): Source {
  return { sql: `select ${expr} as v from generate_series($1::int, $2::int) as i`, count };
}

function list(values: readonly string[], cast: string): Source {
  const literals = values.map((v) => `(${v})::${cast}`).join(', ');
  return {
    sql: `select v from unnest(array[${literals}]) with ordinality as t(v, i) where i between $1 and $2`,
    count: values.length,
  };
}

function int64Be(v: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, v);
  return b;
}

function int32Be(v: number, width: 2 | 4): Uint8Array {
  const b = new Uint8Array(width);
  const view = new DataView(b.buffer);
  if (width === 2) view.setInt16(0, v);
  else view.setInt32(0, v);
  return b;
}

function uuidBytes(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text.replaceAll('-', ''), 'hex'));
}

function powerEdges(bits: number): string[] {
  const out = ['0', '1', '-1', '2', '-2'];
  for (let k = 1; k < bits; k++) {
    const p = 2n ** BigInt(k);
    for (const v of [p - 1n, p, p + 1n, -p - 1n, -p, -p + 1n]) out.push(v.toString());
  }
  const max = 2n ** BigInt(bits - 1) - 1n;
  out.push(max.toString(), (-max - 1n).toString(), (max - 1n).toString(), (-max).toString());
  return out.filter((v) => BigInt(v) <= max && BigInt(v) >= -max - 1n);
}

// Hex digits mapped to characters of 1, 2, 3 and 4 UTF-8 bytes, so md5 text becomes varied UTF-8.
const MULTIBYTE = `'0123456789abcdef', 'aZé€😀ß中ж𝄞ñ ü字🎉xÆ'`;

const CASES: Record<string, TypeCase> = {
  bigint: {
    sqlFunction: 'hashint8extended',
    sources: [
      list(powerEdges(64), 'int8'),
      series('(i - 300000)::int8', 600_000),
      // Uniform over the whole int8 range.
      series(`('x' || substr(md5(i::text), 1, 16))::bit(64)::int8`, 400_000),
    ],
    paths: {
      hashInt8Extended: (t, s) => hashInt8Extended(BigInt(t), s),
      'hashKeyText(bigint)': (t, s) => hashKeyText('bigint', t, s),
      'hashKeyBinary(bigint)': (t, s) => hashKeyBinary('bigint', int64Be(BigInt(t)), s),
    },
  },
  int: {
    sqlFunction: 'hashint4extended',
    sources: [
      list(powerEdges(32), 'int4'),
      series('(i - 300000)::int4', 600_000),
      series(`('x' || substr(md5(i::text), 1, 8))::bit(32)::int4`, 400_000),
    ],
    paths: {
      hashInt4Extended: (t, s) => hashInt4Extended(Number(t), s),
      'hashKeyText(int)': (t, s) => hashKeyText('int', t, s),
      'hashKeyBinary(int)': (t, s) => hashKeyBinary('int', int32Be(Number(t), 4), s),
      // Equal values of different widths hash alike.
      'hashInt8Extended(int)': (t, s) => hashInt8Extended(BigInt(t), s),
    },
  },
  smallint: {
    sqlFunction: 'hashint2extended',
    // The whole domain 16 times over, so the smallest type also reaches a million comparisons.
    sources: [series('((i % 65536) - 32768)::int2', 65536 * 16)],
    paths: {
      hashInt2Extended: (t, s) => hashInt2Extended(Number(t), s),
      'hashKeyText(smallint)': (t, s) => hashKeyText('smallint', t, s),
      'hashKeyBinary(smallint)': (t, s) => hashKeyBinary('smallint', int32Be(Number(t), 2), s),
    },
  },
  text: {
    sqlFunction: 'hashtextextended',
    sources: [
      list(
        ["''", "' '", "'a'", "'é'", "'€'", "'😀'", "repeat('x', 10240)", "repeat('€😀é', 4000)"],
        'text',
      ),
      // Every length 0..64 (and across the hand-encoding limit), ASCII and multibyte.
      series(`left(repeat(md5(i::text), 5), i % 160)`, 2_000),
      series(`left(translate(repeat(md5(i::text), 5), ${MULTIBYTE}), i % 160)`, 2_000),
      series(`repeat(md5(i::text), 320)`, 100),
      series(`left(md5(i::text) || md5((i + 1)::text), i % 70)`, 700_000),
      series(`left(translate(md5(i::text) || md5((-i)::text), ${MULTIBYTE}), i % 70)`, 300_000),
    ],
    paths: {
      hashTextExtended: (t, s) => hashTextExtended(t, s),
      'hashKeyText(text)': (t, s) => hashKeyText('text', t, s),
      'hashKeyBinary(text)': (t, s) => hashKeyBinary('text', Buffer.from(t, 'utf8'), s),
    },
  },
  uuid: {
    sqlFunction: 'uuid_hash_extended',
    sources: [
      list(
        [
          "'00000000-0000-0000-0000-000000000000'",
          "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
          "'00000000-0000-0000-0000-000000000001'",
          "'80000000-0000-0000-0000-000000000000'",
        ],
        'uuid',
      ),
      series('md5(i::text)::uuid', 1_000_000),
    ],
    paths: {
      hashUuidExtended: (t, s) => hashUuidExtended(t, s),
      'hashKeyText(uuid)': (t, s) => hashKeyText('uuid', t.toUpperCase(), s),
      'hashKeyBinary(uuid)': (t, s) => hashKeyBinary('uuid', uuidBytes(t), s),
    },
  },
};

let server: PgServer;
let client: pg.Client;

before(async () => {
  server = await startPostgres({ name: 'pghash' });
  client = await server.connect();
});

after(async () => {
  await client?.end();
  await server?.dispose();
});

/**
 * Streams one type's values in batches and checks every path for every seed. Returns how many
 * distinct values and (value, seed) pairs were compared, and the first few mismatches.
 */
async function compareType(
  c: TypeCase,
): Promise<{ values: number; pairs: number; mismatches: Mismatch[] }> {
  const hashes = SEEDS.map((_, j) => `${c.sqlFunction}(v, $${j + 3})::text`).join(', ');
  const seedParams = SEEDS.map(String);
  const paths = Object.entries(c.paths);
  const mismatches: Mismatch[] = [];
  let values = 0;
  for (const source of c.sources) {
    for (let lo = 1; lo <= source.count; lo += BATCH) {
      const hi = Math.min(source.count, lo + BATCH - 1);
      const result = await client.query<string[]>({
        text: `select v::text, ${hashes} from (${source.sql}) as s`,
        values: [lo, hi, ...seedParams],
        rowMode: 'array',
      });
      for (const row of result.rows) {
        const text = row[0]!;
        for (let j = 0; j < SEEDS.length; j++) {
          const seed = SEEDS[j]!;
          const expected = BigInt(row[j + 1]!);
          for (const [name, path] of paths) {
            let got: bigint | string;
            try {
              got = path(text, seed);
            } catch (e) {
              got = `threw ${String(e)}`;
            }
            if (got !== expected && mismatches.length < 10) {
              mismatches.push({ path: name, value: text.slice(0, 80), seed, expected, got });
            }
          }
        }
      }
      values += result.rows.length;
    }
  }
  return { values, pairs: values * SEEDS.length, mismatches };
}

for (const [keyType, c] of Object.entries(CASES)) {
  test(`${c.sqlFunction}: TypeScript equals Postgres on every generated ${keyType} value`, async (t) => {
    const started = performance.now();
    const { values, pairs, mismatches } = await compareType(c);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    t.diagnostic(
      `${keyType}: ${values} values x ${SEEDS.length} seeds = ${pairs} pairs, ` +
        `each through ${Object.keys(c.paths).length} paths, in ${seconds} s`,
    );
    assert.deepEqual(mismatches, [], `first differences for ${keyType}`);
    assert.ok(pairs >= 1_000_000, `only ${pairs} pairs compared for ${keyType}`);
  });
}
