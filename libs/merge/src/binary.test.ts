// Binary forms against a real Postgres: every value of every type the merge decodes or encodes,
// sent by its own send function (`numeric_send(v)`, ...), must decode to the value its text
// decodes to, encode from its text to exactly those bytes, and sort as Postgres's ORDER BY does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres } from '@tessera/testkit';
import type { PgServer } from '@tessera/testkit';
import type pg from 'pg';
import { typeOps } from './compare.js';
import { binaryEncoder } from './encode.js';
import { formatDecimal } from './decimal.js';
import { decodeNumeric, encodeNumeric } from './numeric-binary.js';
import { OID } from './oids.js';

let server: PgServer;
let client: pg.Client;

before(async () => {
  server = await startPostgres({ name: 'merge-binary' });
  client = await server.connect();
  // A zone whose offsets changed over time (LMT before 1893, daylight saving since).
  await client.query(`set timezone = 'Europe/Berlin'`);
});

after(async () => {
  await client?.end();
  await server?.dispose();
});

interface TypeCase {
  readonly oid: number;
  readonly type: string;
  readonly send: string;
  readonly values: readonly string[];
  /** ORDER BY is defined for it (and compared with Postgres's). */
  readonly ordered?: boolean;
}

const CASES: readonly TypeCase[] = [
  {
    oid: OID.int2,
    type: 'int2',
    send: 'int2send',
    values: ['0', '-32768', '32767', '-1', '42'],
    ordered: true,
  },
  {
    oid: OID.int4,
    type: 'int4',
    send: 'int4send',
    values: ['0', '-2147483648', '2147483647', '7'],
    ordered: true,
  },
  {
    oid: OID.int8,
    type: 'int8',
    send: 'int8send',
    values: ['0', '-9223372036854775808', '9223372036854775807', '-5', '1234567890123'],
    ordered: true,
  },
  {
    oid: OID.oid,
    type: 'oid',
    send: 'oidsend',
    values: ['0', '4294967295', '2147483648', '16384'],
    ordered: true,
  },
  {
    oid: OID.numeric,
    type: 'numeric',
    send: 'numeric_send',
    values: [
      '0',
      '0.000',
      '1',
      '-1',
      '1.5',
      '-1.50',
      '10000',
      '10000.0001',
      '0.0001',
      '0.00001',
      '-0.00001',
      '99999999',
      '100000000',
      '123456789012345678901234567890.123456789',
      '1e100',
      '-1e-100',
      '0.1',
      '1.10',
      '-123.4500',
      '9999.9999',
      '12345678.87654321',
      'NaN',
      'Infinity',
      '-Infinity',
    ],
    ordered: true,
  },
  {
    oid: OID.float8,
    type: 'float8',
    send: 'float8send',
    values: [
      '0',
      '-0',
      '1.5',
      '-2.25',
      '1e308',
      '-1e-308',
      '4.9e-324',
      '0.1',
      'NaN',
      'Infinity',
      '-Infinity',
      '3.141592653589793',
    ],
    ordered: true,
  },
  {
    oid: OID.float4,
    type: 'float4',
    send: 'float4send',
    values: [
      '0',
      '-0',
      '1.5',
      '0.1',
      '3.4028235e38',
      '1e-45',
      'NaN',
      'Infinity',
      '-Infinity',
      '2.7182817',
    ],
    ordered: true,
  },
  { oid: OID.bool, type: 'bool', send: 'boolsend', values: ['true', 'false'], ordered: true },
  {
    oid: OID.text,
    type: 'text',
    send: 'textsend',
    values: ['', 'a', 'Ünïcode ✓', 'a b', 'zeta'],
    ordered: true,
  },
  {
    oid: OID.varchar,
    type: 'varchar',
    send: 'varcharsend',
    values: ['', 'émile', 'x'],
    ordered: true,
  },
  {
    oid: OID.bpchar,
    type: 'char(5)',
    send: 'bpcharsend',
    values: ['', 'ab', 'ab  c', 'é'],
    ordered: true,
  },
  {
    oid: OID.name,
    type: 'name',
    send: 'namesend',
    values: ['pg_class', 'Zürich', ''],
    ordered: true,
  },
  {
    oid: OID.char,
    type: '"char"',
    send: 'charsend',
    values: ['a', 'Z', '\\351', ''],
    ordered: true,
  },
  {
    oid: OID.uuid,
    type: 'uuid',
    send: 'uuid_send',
    values: [
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    ],
    ordered: true,
  },
  {
    oid: OID.bytea,
    type: 'bytea',
    send: 'byteasend',
    values: ['\\x', '\\x00', '\\x00ff', '\\xff', '\\x0102'],
    ordered: true,
  },
  {
    oid: OID.date,
    type: 'date',
    send: 'date_send',
    values: [
      '2000-01-01',
      '1999-12-31',
      '1970-01-01',
      '0044-03-15 BC',
      '4714-11-24 BC',
      '5874897-12-31',
      'infinity',
      '-infinity',
      '2024-02-29',
    ],
    ordered: true,
  },
  {
    oid: OID.time,
    type: 'time',
    send: 'time_send',
    values: ['00:00:00', '23:59:59.999999', '24:00:00', '12:34:56.5', '00:00:00.000001'],
    ordered: true,
  },
  {
    oid: OID.timestamp,
    type: 'timestamp',
    send: 'timestamp_send',
    values: [
      '2000-01-01 00:00:00',
      '1999-12-31 23:59:59.999999',
      '1970-01-01 00:00:00',
      '0044-03-15 12:00:00 BC',
      '4714-11-24 00:00:00 BC',
      '294276-12-31 23:59:59.999999',
      'infinity',
      '-infinity',
      '2021-06-01 07:13:01.5',
    ],
    ordered: true,
  },
  {
    oid: OID.timestamptz,
    type: 'timestamptz',
    send: 'timestamptz_send',
    values: [
      '2000-01-01 00:00:00+00',
      '1850-06-01 12:00:00+00',
      '1999-12-31 23:59:59.999999+00',
      '2021-03-28 00:59:59+00',
      '2021-03-28 01:00:00+00',
      '2021-10-31 00:30:00+00',
      '2021-10-31 01:30:00+00',
      '0100-01-01 00:00:00+00 BC',
      'infinity',
      '-infinity',
    ],
    ordered: true,
  },
  {
    oid: OID.interval,
    type: 'interval',
    send: 'interval_send',
    values: [
      '0',
      '1 year 2 mons 3 days 04:05:06.789',
      '-1 year -2 mons +3 days -04:05:06',
      '1 mon',
      '30 days',
      '-1 second',
      '100 hours',
      '1 day -1 second',
      '-178956970 years -8 mons',
      '178956970 years 7 mons',
      '2147483647 days',
      '-2147483648 days',
      '2562047788 hours',
      '-0.000001 seconds',
      '1 year',
      '-1 days +02:03:00',
    ],
    ordered: true,
  },
  {
    oid: OID.json,
    type: 'json',
    send: 'json_send',
    values: ['{"b": 1, "a" : [1, 2.50]}', 'null', '"x"'],
  },
  {
    oid: OID.jsonb,
    type: 'jsonb',
    send: 'jsonb_send',
    values: [
      '{"b": 1, "a": [1, 2.50, "x"]}',
      'null',
      '"x"',
      '"é\\n\\u0001"',
      '1',
      '1.0',
      '-2',
      'true',
      'false',
      '[]',
      '{}',
      '[null]',
      '[1, [2, 3]]',
      '[1, 2]',
      '[[]]',
      '{"a": null}',
      '{"aa": 1}',
      '{"b": 1}',
      '{"a": {"b": [1, {"c": true}]}}',
      '[{"a": 1}, 2]',
      '["a", "b"]',
      '["b"]',
      '{"a": 1, "b": 2}',
      '[true, false]',
      '[1.5e3]',
      '{"x": "y", "": 0}',
    ],
    ordered: true,
  },
];

/** Values as their output functions print them (node-postgres parses nothing). */
const RAW = { getTypeParser: () => (v: string) => v };

async function fromPostgres(k: TypeCase): Promise<{ text: string; binary: Buffer }[]> {
  const literals = k.values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', ');
  const res = await client.query({
    text: `select x, encode(${k.send}(x), 'hex') from unnest(array[${literals}]::${k.type}[]) u(x)`,
    rowMode: 'array',
    types: RAW,
  });
  return (res.rows as [string | null, string][]).map(([t, b]) => ({
    text: t ?? '',
    binary: Buffer.from(b, 'hex'),
  }));
}

async function postgresOrder(k: TypeCase): Promise<string[]> {
  const literals = k.values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', ');
  const res = await client.query({
    text: `select x from unnest(array[${literals}]::${k.type}[]) u(x) order by x`,
    rowMode: 'array',
    types: RAW,
  });
  return (res.rows as [string][]).map(([t]) => t);
}

describe('binary forms, checked against Postgres send functions', () => {
  for (const k of CASES) {
    test(`${k.type}: text and binary decode alike; text encodes to the send function's bytes`, async () => {
      const rows = await fromPostgres(k);
      assert.equal(rows.length, k.values.length);
      const encode = binaryEncoder(k.oid);
      const comparable = k.oid !== OID.json;
      const textOps = comparable ? typeOps(k.oid, 'equality', true, 0) : undefined;
      const binaryOps = comparable ? typeOps(k.oid, 'equality', true, 1) : undefined;
      for (const { text, binary } of rows) {
        const t = Buffer.from(text, 'utf8');
        const why = `${k.type} ${JSON.stringify(text)} (${binary.toString('hex')})`;
        if (textOps !== undefined && binaryOps !== undefined) {
          const a = textOps.decode(t);
          const b = binaryOps.decode(binary);
          assert.equal(textOps.compare(a, b), 0, why);
          assert.equal(textOps.key(a), binaryOps.key(b), why);
        }
        // Floats are not encoded from text: a NaN's bits are not in its text.
        if (k.oid === OID.float4 || k.oid === OID.float8) assert.equal(encode, undefined);
        else assert.equal(encode?.(t).toString('hex'), binary.toString('hex'), why);
      }
    });

    if (k.ordered === true)
      test(`${k.type}: binary values sort as Postgres orders them`, async () => {
        const rows = await fromPostgres(k);
        const ops = typeOps(k.oid, 'order', true, 1);
        const sorted = rows
          .map((r) => ({ text: r.text, v: ops.decode(r.binary) }))
          .sort((a, b) => ops.compare(a.v, b.v));
        const want = await postgresOrder(k);
        // Equal values (1 mon = 30 days, 1 = 1.0) may come in either order: compare as values.
        const textOps = typeOps(k.oid, 'order', true, 0);
        for (let i = 0; i < want.length; i++) {
          const w = textOps.decode(Buffer.from(want[i] ?? '', 'utf8'));
          const g = sorted[i]?.v;
          assert.equal(
            textOps.compare(w, g),
            0,
            `${k.type} #${i}: ${want[i]} vs ${sorted[i]?.text}`,
          );
        }
      });
  }

  test('numeric: binary decodes to the text Postgres prints, and back', async () => {
    const numeric = CASES.find((k) => k.oid === OID.numeric)!;
    for (const { text, binary } of await fromPostgres(numeric)) {
      const d = decodeNumeric(binary);
      assert.equal(formatDecimal(d), text);
      assert.equal(encodeNumeric(d).toString('hex'), binary.toString('hex'), text);
    }
  });

  test('computed numerics (sums, averages) encode as Postgres sends its own results', async () => {
    const res = await client.query({
      text: `select v::text, encode(numeric_send(v), 'hex') from (
        select (1.5 + 2.25)::numeric union all select 10::numeric / 3 union all
        select avg(x) from generate_series(1, 7) x union all
        select sum(x * 0.001) from generate_series(1, 1000) x union all
        select avg(x) from generate_series(-5, 0) x union all select sum(x) from generate_series(1, 0) x) s(v)
        where v is not null`,
      rowMode: 'array',
    });
    const encode = binaryEncoder(OID.numeric)!;
    for (const [text, hex] of res.rows as [string, string][])
      assert.equal(encode(Buffer.from(text)).toString('hex'), hex, text);
  });

  test('malformed binary values are errors, never a crash', () => {
    assert.throws(() => decodeNumeric(Buffer.from([0, 1, 0])), /malformed binary numeric/);
    assert.throws(() => decodeNumeric(Buffer.from('0001000000000000ffff', 'hex')), /malformed/);
    assert.throws(() => typeOps(OID.int8, 'order', true, 1).decode(Buffer.alloc(3)), /3 bytes/);
    assert.throws(
      () => typeOps(OID.timestamp, 'order', true, 1).decode(Buffer.alloc(4)),
      /4 bytes/,
    );
    assert.throws(
      () => typeOps(OID.jsonb, 'order', true, 1).decode(Buffer.from([2, 0x31])),
      /version/,
    );
  });
});
