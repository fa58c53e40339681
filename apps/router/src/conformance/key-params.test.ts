// Key parameters of other types for an int8 shard key, differential, through real drivers:
// psycopg 3 (Python floats in text and binary, float4, Decimal in text and binary, int sizes,
// str) and node-postgres (numbers as text, literals out of bigint range), against the router and
// one plain Postgres with the same 20 rows: every lookup, UPDATE and INSERT must agree.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { openDriver, type Outcome, setUpBoth } from '../testing/drivers.js';
import { PYTHON, skipWithoutPython } from '../testing/python.js';

const run = promisify(execFile);
const PROGRAM = fileURLToPath(new URL('./key-params.py', import.meta.url));

let c: TestCluster;
let plain: PgServer;

const SETUP = [
  'create table k (id bigint primary key, v int not null)',
  `insert into k (id, v) values ${Array.from({ length: 20 }, (_, i) => `(${i + 1}, ${(i + 1) * 100})`).join(', ')}`,
];

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({
      keyspaces: [{ name: 'k', keyType: KeyType.BIGINT, ranges: 4 }],
      tables: [{ name: 'k', kind: 'sharded', keyspace: 'k', keyColumn: 'id' }],
    }),
    startPostgres({ name: 'key-params-plain' }),
  ]);
  await setUpBoth(c.url(), plain, SETUP);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const plainUrl = (): string => `postgres://postgres@127.0.0.1:${plain.port}/postgres`;

async function psycopg(url: string): Promise<string[]> {
  const { stdout } = await run(PYTHON, [PROGRAM, url], { timeout: 120_000 });
  return stdout.trim().split('\n');
}

describe('key parameters converted as Postgres converts them', () => {
  test(
    'psycopg 3: floats, float4, Decimal, ints and str for an int8 key',
    { skip: skipWithoutPython('psycopg', 'python3-psycopg') },
    async () => {
      const want = await psycopg(plainUrl());
      const got = await psycopg(c.url());
      assert.equal(got.length, want.length);
      for (let i = 0; i < want.length; i++) assert.equal(got[i], want[i], `line ${i}`);
      // The 20 rows were each found by a float key, in text and binary (not scattered by luck).
      const found = got.filter((l) => /"op": "float (text|binary) \d+", "rows": \[\[/.test(l));
      assert.equal(found.length, 40, got.join('\n'));
    },
  );

  test('node-postgres: numbers as text, literals out of bigint range', async () => {
    const statements = [
      'select id from k where id = 99999999999999999999',
      'select id from k where id = -99999999999999999999',
      'select id from k where id = 3.0',
      'select id from k where id = 3.5',
      'select id from k where id in (4.0, 99999999999999999999) order by id',
      'update k set v = v + 1 where id = 99999999999999999999',
      'update k set v = v + 1 where id = 5.0',
      'select id, v from k where id = 5',
      'insert into k (id, v) values (30.5, 0)',
      'insert into k (id, v) values (99999999999999999999, 0)',
      'select id from k where id = 31',
    ];
    const outcomes = async (url: string): Promise<Outcome[]> => {
      const session = await openDriver('pg-simple', url);
      const out: Outcome[] = [];
      try {
        for (const sql of statements) out.push(await session.run(sql));
      } finally {
        await session.end();
      }
      return out;
    };
    const want = await outcomes(plainUrl());
    const got = await outcomes(c.url());
    for (let i = 0; i < want.length; i++)
      assert.deepEqual(
        { rows: got[i]!.rows, sqlstate: got[i]!.sqlstate },
        { rows: want[i]!.rows, sqlstate: want[i]!.sqlstate },
        `${statements[i]}: router ${JSON.stringify(got[i])} vs Postgres ${JSON.stringify(want[i])}`,
      );
    // Parameters from node-postgres are untyped text: '3.5' for an int8 key is 22P02 on both.
    const pgParams = async (url: string): Promise<unknown[]> => {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const out: unknown[] = [];
      try {
        for (const v of [3, '3', 3.5, '3.5', ' 7 ', '99999999999999999999']) {
          try {
            out.push((await client.query('select id from k where id = $1', [v])).rows);
          } catch (e) {
            out.push((e as { code?: string }).code);
          }
        }
        const u = await client.query('update k set v = v + 1 where id = $1 returning id, v', [9]);
        out.push(u.rows);
      } finally {
        await client.end();
      }
      return out;
    };
    assert.deepEqual(await pgParams(c.url()), await pgParams(plainUrl()));
  });
});
