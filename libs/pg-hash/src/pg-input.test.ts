// Key validation against a real Postgres 15: for awkward key texts, hashKeyText must fail exactly
// when the type's input function fails (same SQLSTATE and message) and hash alike otherwise.
import { test, before, after } from 'node:test';
import { strict as assert } from 'node:assert';
import type pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { hashKeyText, KeyValueError, type KeyType } from './index.js';

const SQL: Record<KeyType, { cast: string; fn: string }> = {
  bigint: { cast: 'int8', fn: 'hashint8extended' },
  int: { cast: 'int4', fn: 'hashint4extended' },
  smallint: { cast: 'int2', fn: 'hashint2extended' },
  text: { cast: 'text', fn: 'hashtextextended' },
  uuid: { cast: 'uuid', fn: 'uuid_hash_extended' },
};

const INTEGER_TEXTS = [
  '0',
  '-0',
  '+0',
  '00042',
  ' 42',
  '42 ',
  '\t\n\v\f\r42\t\n\v\f\r',
  '+42',
  '-42',
  '',
  ' ',
  '+',
  '-',
  '+-1',
  '--1',
  '1.0',
  '1.',
  '.5',
  '1e3',
  '0x10',
  '0o17',
  '0b101',
  '1_000',
  '1 2',
  'abc',
  '42abc',
  '\u00a042',
  '42\u00a0',
  '٣',
  '32767',
  '32768',
  '-32768',
  '-32769',
  '99999',
  '99999abc',
  '2147483647',
  '2147483648',
  '-2147483648',
  '-2147483649',
  '4294967296',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '9223372036854775808abc',
  '9223372036854775809abc',
  '-9223372036854775808 x',
  '18446744073709551616',
  '99999999999999999999',
  '000000000000000000000000000001',
  '-000000000000000000000009223372036854775808',
];

const UUID_TEXTS = [
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
  '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
  'a0eebc999c0b4ef8bb6d6bb9bd380a11',
  'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11',
  '{a0eebc999c0b4ef8bb6d6bb9bd380a11}',
  'a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11',
  '',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111',
  '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
  'a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11',
  'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-',
  '-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ',
  'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '{}',
  '{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}}',
  '00000000-0000-0000-0000-000000000000',
];

const TEXT_TEXTS = ['', ' ', 'a', ' 42 ', 'ключ', '中文', '😀', 'e\u0301', 'a\u00a0b'];

const CASES: [KeyType, string][] = [
  ...INTEGER_TEXTS.flatMap((t) =>
    (['bigint', 'int', 'smallint'] as const).map((k): [KeyType, string] => [k, t]),
  ),
  ...UUID_TEXTS.map((t): [KeyType, string] => ['uuid', t]),
  ...TEXT_TEXTS.map((t): [KeyType, string] => ['text', t]),
];

type Outcome = { hash: string } | { sqlstate: string; message: string };

let server: PgServer;
let client: pg.Client;

before(async () => {
  server = await startPostgres({ name: 'pginput' });
  client = await server.connect();
});

after(async () => {
  await client?.end();
  await server?.dispose();
});

async function postgresOutcome(keyType: KeyType, text: string, seed: bigint): Promise<Outcome> {
  const { cast, fn } = SQL[keyType];
  try {
    const r = await client.query<{ h: string }>(`select ${fn}($1::${cast}, $2)::text as h`, [
      text,
      String(seed),
    ]);
    return { hash: r.rows[0]!.h };
  } catch (e) {
    const err = e as { code?: string; message: string };
    return { sqlstate: err.code ?? '?', message: err.message };
  }
}

function ourOutcome(keyType: KeyType, text: string, seed: bigint): Outcome {
  try {
    return { hash: String(hashKeyText(keyType, text, seed)) };
  } catch (e) {
    if (!(e instanceof KeyValueError)) throw e;
    return { sqlstate: e.sqlstate, message: e.message };
  }
}

test(`hashKeyText fails and succeeds exactly as Postgres input functions do (${CASES.length} cases)`, async () => {
  for (const [keyType, text] of CASES) {
    for (const seed of [0n, -3n]) {
      const expected = await postgresOutcome(keyType, text, seed);
      assert.deepEqual(
        ourOutcome(keyType, text, seed),
        expected,
        `${keyType} ${JSON.stringify(text)} seed ${seed}`,
      );
    }
  }
});
