// Result formats of reads across nodes, differential and byte for byte: each statement runs
// through the extended protocol on a raw connection to the router (tables sharded over two data
// nodes) and to one plain Postgres with the same rows, asking all columns in binary, every other
// column in binary (both ways round) and all in text; the RowDescriptions (names, types, formats)
// and every DataRow's bytes must be the same. Also binary parameters (LIMIT / OFFSET the router
// reads, keys it routes by, values the nodes take), a Describe of the portal on its own, and the
// errors Postgres gives for result or parameter formats that do not fit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { setUpBoth } from '../testing/drivers.js';
import type { RawClient } from '../testing/raw-client.js';
import { rawSession, runExtended, type Answer, type ExtendedRun } from '../testing/extended.js';
import { PYTHON, skipWithoutPython } from '../testing/python.js';
import { DDL, OTHER_ROWS, WIDE_ROWS } from './binary-data.js';
import { queries } from './binary-queries.js';

const SESSION = ["set timezone = 'Europe/Berlin'"];
const PROGRAM = fileURLToPath(new URL('./binary.py', import.meta.url));
const execFileAsync = promisify(execFile);

let c: TestCluster;
let plain: PgServer;
let viaRouter: RawClient;
let direct: RawClient;

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({
      keyspaces: [{ name: 'w', keyType: KeyType.BIGINT, ranges: 4 }],
      tables: [
        { name: 'wide', kind: 'sharded', keyspace: 'w', keyColumn: 'id' },
        { name: 'tricky', kind: 'sharded', keyspace: 'w', keyColumn: 'id' },
        { name: 'ref', kind: 'reference' },
      ],
    }),
    startPostgres({ name: 'binary-plain' }),
  ]);
  await setUpBoth(c.url(), plain, [...DDL, ...OTHER_ROWS]);
  await plain.query(WIDE_ROWS);
  await setUpBoth(c.url(), { query: async () => undefined }, [await asValues('wide')]);
  viaRouter = await rawSession(c.router.port, SESSION);
  direct = await rawSession(plain.port, SESSION);
});

after(async () => {
  viaRouter?.end();
  direct?.end();
  await c?.dispose();
  await plain?.dispose();
});

/** The rows of `table` on the plain server as one INSERT ... VALUES of their text. */
async function asValues(table: string): Promise<string> {
  const client = await plain.connect();
  try {
    const res = await client.query({
      text: `select * from ${table}`,
      rowMode: 'array',
      types: { getTypeParser: () => (v: string) => v },
    });
    const rows = (res.rows as (string | null)[][]).map(
      (r) => `(${r.map((v) => (v === null ? 'null' : `'${v.replaceAll("'", "''")}'`)).join(', ')})`,
    );
    return `insert into ${table} values ${rows.join(', ')}`;
  } finally {
    await client.end();
  }
}

async function scatterCount(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
  const m = /tessera_router_statements_total\{route="scatter"[^}]*\} (\d+)/.exec(text);
  return Number(m?.[1] ?? 0);
}

function describeAnswer(a: Answer): string {
  return JSON.stringify({ ...a, rows: a.rows.slice(0, 6) }).slice(0, 1500);
}

/** Runs `run` on both and asserts the same answer, byte for byte. */
async function same(run: ExtendedRun, ordered: boolean, why = run.sql): Promise<Answer> {
  const r = await runExtended(viaRouter, run);
  const p = await runExtended(direct, run);
  const formats = JSON.stringify(run.resultFormats ?? []);
  const msg = `${why} formats=${formats}\n  router: ${describeAnswer(r)}\n  plain:  ${describeAnswer(p)}`;
  assert.equal(r.error, p.error, msg);
  assert.deepEqual(r.columns, p.columns, msg);
  assert.equal(r.tag, p.tag, msg);
  if (ordered) assert.deepEqual(r.rows, p.rows, msg);
  else assert.deepEqual([...r.rows].sort(), [...p.rows].sort(), msg);
  return r;
}

/** Every result-format shape for a statement of `n` columns. */
function formatSets(n: number): number[][] {
  const alternate = (first: number) => Array.from({ length: n }, (_, i) => (i + first) % 2);
  return [[1], alternate(1), alternate(0), []];
}

function int8(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(v, 0);
  return b;
}

function int4(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v, 0);
  return b;
}

/** array_send of a one-dimensional int8[]. */
function int8Array(values: readonly bigint[]): Buffer {
  const head = Buffer.alloc(20);
  head.writeInt32BE(1, 0);
  head.writeInt32BE(0, 4);
  head.writeInt32BE(20, 8);
  head.writeInt32BE(values.length, 12);
  head.writeInt32BE(1, 16);
  return Buffer.concat([head, ...values.flatMap((v) => [int4(8), int8(v)])]);
}

describe('binary result formats across nodes: router vs plain Postgres, byte for byte', () => {
  test('every statement, in binary, mixed and text formats', async () => {
    const before = await scatterCount();
    let runs = 0;
    for (const k of queries()) {
      const shape = await runExtended(direct, { sql: k.sql });
      assert.equal(shape.error, undefined, `${k.sql}: ${shape.error}`);
      for (const resultFormats of formatSets(shape.columns?.length ?? 0)) {
        const a = await same({ sql: k.sql, resultFormats }, k.ordered);
        assert.equal(a.error, undefined, k.sql);
        runs++;
      }
    }
    // They were read across nodes, not answered by one.
    assert.ok((await scatterCount()) - before >= runs, 'every run was a read across nodes');
  });

  test('a Describe of the portal on its own reports the formats its Bind asked', async () => {
    const cases: [string, number[][]][] = [
      [
        'select g, count(*), min(ts), avg(nm) from wide group by g order by g',
        [[1], [], [0, 1, 0, 1]],
      ],
      ['select id, jb, iv from wide order by id limit 4', [[1], [1, 0, 1]]],
    ];
    for (const [sql, sets] of cases)
      for (const resultFormats of sets)
        await same({ sql, resultFormats, describeApart: true }, true);
    // EXPLAIN's rows are the router's plan, not Postgres's: only its column is the same.
    for (const resultFormats of [[1], []]) {
      const run = {
        sql: 'explain select id from wide order by id',
        resultFormats,
        describeApart: true,
      };
      const r = await runExtended(viaRouter, run);
      const p = await runExtended(direct, run);
      assert.deepEqual(r.columns, p.columns);
      assert.ok(r.rows.length > 0 && r.error === undefined);
    }
  });

  test('result formats that fit no column list, or no format, are the errors Postgres gives', async () => {
    const sql = 'select id, t, d from wide order by id';
    for (const resultFormats of [[0, 1], [1, 1, 1, 1, 1], [2], [0, 3, 0]])
      for (const describeApart of [false, true])
        await same({ sql, resultFormats, describeApart }, true);
    await same({ sql: 'select id from wide where id < 0', resultFormats: [7] }, true);
  });

  test('one node column feeding columns asked in both formats: encoded at the router, or refused', async () => {
    for (const sql of [
      'select max(i4), max(i4), min(ts), min(ts) from wide',
      'select g, min(nm), min(nm), max(u), max(u) from wide group by g order by g',
    ]) {
      const n = (await runExtended(direct, { sql })).columns?.length ?? 0;
      for (const first of [0, 1])
        await same(
          { sql, resultFormats: Array.from({ length: n }, (_, i) => (i + first) % 2) },
          true,
        );
    }
    // A float's text does not say which NaN it was: that one is refused, naming the column.
    const r = await runExtended(viaRouter, {
      sql: 'select max(f8) as a, max(f8) as b from wide',
      resultFormats: [0, 1],
    });
    assert.equal(
      r.error,
      '0A000 column "b" of type float8 cannot be sent in binary from a read across nodes here; ask for it in text',
    );
  });

  test('LIMIT and OFFSET as binary parameters, checked as Postgres checks them', async () => {
    const sql = 'select id, t, tz from wide order by id limit $1 offset $2';
    for (const [paramTypes, params] of [
      [
        [20, 20],
        [int8(5n), int8(3n)],
      ],
      [
        [0, 0],
        [int8(4n), int8(0n)],
      ],
      [
        [23, 23],
        [int4(6), int4(70)],
      ],
      [
        [20, 20],
        [null, int8(75n)],
      ],
      [
        [0, 0],
        [int4(5), int8(0n)],
      ],
      [
        [20, 0],
        [int8(5n), Buffer.concat([int8(1n), Buffer.from([0])])],
      ],
      [
        [20, 20],
        [int8(-1n), int8(0n)],
      ],
    ] as const)
      for (const resultFormats of [[1], [0, 1, 0]])
        await same(
          { sql, paramTypes, params, paramFormats: [1], resultFormats },
          true,
          `${sql} ${JSON.stringify(params)}`,
        );
  });

  test('keys in binary route the statement; values in binary reach the nodes', async () => {
    const before = await scatterCount();
    const single = await same(
      {
        sql: 'select * from wide where id = $1',
        paramTypes: [20],
        params: [int8(42n)],
        paramFormats: [1],
        resultFormats: [1],
      },
      true,
    );
    assert.equal(single.rows.length, 1);
    assert.equal(await scatterCount(), before, 'a key pinned in binary goes to its node');
    for (const resultFormats of [[1], [0, 1, 1]])
      await same(
        {
          sql: 'select id, t, nm from wide where id = any($1) order by id',
          paramTypes: [1016],
          params: [int8Array([3n, 14n, 15n, 92n, 65n, 35n])],
          paramFormats: [1],
          resultFormats,
        },
        true,
      );
    await same(
      {
        sql: 'select g, count(*), max(i4) from wide where i4 > $1 and t <> $2 group by g order by g',
        paramTypes: [23, 25],
        params: [int4(-20000), Buffer.from('zeta1')],
        paramFormats: [1, 1],
        resultFormats: [1],
      },
      true,
    );
  });

  for (const [driver, module, pkg] of [
    ['asyncpg', 'asyncpg', 'python3-asyncpg'],
    ['psycopg 3, binary cursor', 'psycopg', 'python3-psycopg'],
  ] as const)
    test(
      `${driver}: the rows it decodes are plain Postgres's`,
      { skip: skipWithoutPython(module, pkg) },
      async () => {
        const out = async (url: string): Promise<string[]> =>
          (await execFileAsync(PYTHON, [PROGRAM, url, module], { timeout: 120_000 })).stdout
            .trim()
            .split('\n');
        const want = await out(`postgres://postgres@127.0.0.1:${plain.port}/postgres`);
        const got = await out(c.url());
        assert.equal(got.length, want.length, got.join('\n'));
        for (let i = 0; i < want.length; i++) {
          assert.doesNotMatch(want[i]!, /\tERROR/, want[i]);
          assert.equal(got[i], want[i], `line ${i}`);
        }
      },
    );
});
