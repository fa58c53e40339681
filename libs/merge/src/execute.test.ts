// Executor behaviour on synthetic leaf streams: bounded pulls and early cancellation, error
// propagation, run-time refusals, int8 overflow. Semantics against real Postgres are in
// oracle.test.ts.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from '@tessera/sql';
import { MergeError } from './errors.js';
import { catalog, collect, field, leaf, mustPlan } from './testutil.testutil.js';

const cat = catalog(['t']);
const INT8 = 20;
const TEXT = 25;

before(async () => {
  await initSqlParser();
});

function* sortedInts(n: number, start: number, step: number): Generator<string[]> {
  for (let i = 0; i < n; i++) yield [String(start + i * step)];
}

test('ORDER BY x LIMIT 10 over 3 x 300,000 rows pulls O(k) rows and returns every leaf', async () => {
  const plan = mustPlan('select x from t order by x limit 10', cat);
  const fields = [field('x', INT8)];
  const leaves = [0, 1, 2].map((k) => leaf(fields, sortedInts(300_000, k, 3)));
  const out = await collect(plan, leaves);
  assert.deepEqual(
    out.rows.map((r) => r[0]),
    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
  );
  assert.equal(out.tag, 'SELECT 10');
  const pulls = leaves.reduce((s, l) => s + l.pulls, 0);
  assert.ok(pulls <= 3 * 2 + 10 + 3, `pulled ${pulls} messages`);
  assert.ok(
    leaves.every((l) => l.returned),
    'every leaf iterator was returned',
  );
});

test('a plain scatter with LIMIT stops pulling once it has its rows', async () => {
  const plan = mustPlan('select x from t limit 5', cat);
  const fields = [field('x', INT8)];
  const leaves = [0, 1, 2].map((k) => leaf(fields, sortedInts(300_000, k, 3)));
  const out = await collect(plan, leaves);
  assert.equal(out.rows.length, 5);
  assert.ok(leaves.reduce((s, l) => s + l.pulls, 0) < 20);
  assert.ok(leaves.every((l) => l.returned));
});

test('abandoning the result returns every leaf', async () => {
  const plan = mustPlan('select x from t order by x', cat);
  const fields = [field('x', INT8)];
  const leaves = [0, 1].map((k) => leaf(fields, sortedInts(1000, k, 2)));
  const { executeReadPlan } = await import('./execute.js');
  let n = 0;
  for await (const m of executeReadPlan(plan, leaves)) if (m.kind === 'DataRow' && ++n === 3) break;
  assert.ok(leaves.every((l) => l.returned));
});

test('a leaf error propagates as-is and the other leaves are returned', async () => {
  const plan = mustPlan('select x from t order by x', cat);
  const fields = [field('x', INT8)];
  const boom = Object.assign(new Error('canceling statement due to user request'), {
    code: '57014',
  });
  const bad = leaf(fields, sortedInts(100, 0, 2), { failAfter: 5, error: boom });
  const good = leaf(fields, sortedInts(100, 1, 2));
  await assert.rejects(collect(plan, [good, bad]), (e) => e === boom);
  assert.ok(good.returned && bad.returned);
});

test('sum of int8 partials beyond the int8 range raises bigint out of range (22003)', async () => {
  const plan = mustPlan('select sum(a) from t', cat);
  const fields = [field('_tessera_partial_0', INT8)];
  const leaves = [leaf(fields, [['9223372036854775000']]), leaf(fields, [['1000']])];
  await assert.rejects(
    collect(plan, leaves),
    (e) => e instanceof MergeError && e.sqlstate === '22003' && e.message === 'bigint out of range',
  );
});

test('sum over float8 is refused at run time with 0A000', async () => {
  const plan = mustPlan('select sum(a) from t', cat);
  const leaves = [leaf([field('s', 701)], [['1.5']])];
  await assert.rejects(
    collect(plan, leaves),
    (e) => e instanceof MergeError && e.sqlstate === '0A000' && /float/.test(e.message),
  );
});

test('binary leaves: keys merge by value, computed results are encoded for the client', async () => {
  const int8 = (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(n, 0);
    return b;
  };
  // Bytewise, -1 (ff..) would sort after 5: the merge compares the decoded values.
  const sorted = mustPlan('select x from t order by x', cat);
  const out = await collect(
    sorted,
    [
      leaf([field('x', INT8, 1)], [[int8(-3n)], [int8(5n)]]),
      leaf([field('x', INT8, 1)], [[int8(-1n)]]),
    ],
    { resultFormats: [1] },
  );
  assert.deepEqual(
    out.raw.map((r) => r[0]?.readBigInt64BE(0)),
    [-3n, -1n, 5n],
  );
  assert.equal(out.fields[0]?.format, 1);
  // count's partials come in binary, its result is made by the router and sent in binary.
  const count = mustPlan('select count(*) from t', cat);
  const counted = await collect(
    count,
    [leaf([field('c', INT8, 1)], [[int8(2n)]]), leaf([field('c', INT8, 1)], [[int8(40n)]])],
    { resultFormats: [1] },
  );
  assert.equal(counted.raw[0]?.[0]?.toString('hex'), '000000000000002a');
  assert.equal(counted.fields[0]?.format, 1);
  // The same result asked in text.
  const text = await collect(
    count,
    [leaf([field('c', INT8, 1)], [[int8(2n)]]), leaf([field('c', INT8, 1)], [[int8(40n)]])],
    { resultFormats: [0] },
  );
  assert.deepEqual(text.rows, [['42']]);
});

test('a text column the router cannot encode in binary is refused, naming it', async () => {
  const plan = mustPlan('select x from t', cat);
  await assert.rejects(
    collect(plan, [leaf([field('x', 701)], [['1.5']])], { resultFormats: [1] }),
    (e) =>
      e instanceof MergeError && e.sqlstate === '0A000' && /"x" of type float8/.test(e.message),
  );
});

test('result format codes: a count that fits no column list and unknown codes are errors', async () => {
  const plan = mustPlan('select x, y from t', cat);
  const leaves = () => [leaf([field('x', INT8), field('y', INT8)], [['1', '2']])];
  await assert.rejects(
    collect(plan, leaves(), { resultFormats: [0, 1, 0] }),
    (e) =>
      e instanceof MergeError &&
      e.sqlstate === '08P01' &&
      e.message === 'bind message has 3 result formats but query has 2 columns',
  );
  await assert.rejects(
    collect(plan, leaves(), { resultFormats: [2] }),
    (e) => e instanceof MergeError && e.sqlstate === '22023',
  );
  // As printtup: an unknown code fails the first row; a result without rows never sees it.
  const none = await collect(plan, [leaf([field('x', INT8), field('y', INT8)], [])], {
    resultFormats: [0, 5],
  });
  assert.equal(none.tag, 'SELECT 0');
  assert.equal(none.fields[1]?.format, 5);
  const mixed = await collect(plan, leaves(), { resultFormats: [0, 1] });
  assert.deepEqual(
    mixed.fields.map((f) => f.format),
    [0, 1],
  );
  assert.equal(mixed.raw[0]?.[0]?.toString(), '1');
  assert.equal(mixed.raw[0]?.[1]?.toString('hex'), '0000000000000002');
});

test('ordering text under a non-bytewise collation is refused; equality is not', async () => {
  const plan = mustPlan('select name from t order by name', catalog(['t'], [], false));
  await assert.rejects(
    collect(plan, [leaf([field('name', TEXT)], [['a']])]),
    (e) => e instanceof MergeError && e.sqlstate === '0A000',
  );
  const distinct = mustPlan('select distinct name from t', catalog(['t'], [], false));
  const out = await collect(distinct, [
    leaf([field('name', TEXT)], [['a'], ['b']]),
    leaf([field('name', TEXT)], [['b']]),
  ]);
  assert.deepEqual(out.rows, [['a'], ['b']]);
});

test('a node stream out of the merge order is an error, not a wrong answer', async () => {
  const plan = mustPlan('select x from t order by x', cat);
  const fields = [field('x', INT8)];
  const leaves = [leaf(fields, [['1'], ['3'], ['2']]), leaf(fields, [['0']])];
  await assert.rejects(
    collect(plan, leaves),
    (e) => e instanceof MergeError && e.sqlstate === '0A000',
  );
});

test('LIMIT / OFFSET parameters: NULL means none, negative is an error', async () => {
  const plan = mustPlan('select x from t order by x limit $1 offset $2', cat);
  const fields = [field('x', INT8)];
  const make = () => [leaf(fields, sortedInts(5, 0, 2)), leaf(fields, sortedInts(5, 1, 2))];
  assert.deepEqual((await collect(plan, make(), { params: ['3', '2'] })).rows.flat(), [
    '2',
    '3',
    '4',
  ]);
  assert.equal((await collect(plan, make(), { params: [null, '7'] })).rows.length, 3);
  await assert.rejects(
    collect(plan, make(), { params: ['-1', '0'] }),
    (e) => e instanceof MergeError && e.sqlstate === '2201W',
  );
  await assert.rejects(
    collect(plan, make(), { params: ['1', '-1'] }),
    (e) => e instanceof MergeError && e.sqlstate === '2201X',
  );
});

test('nodes disagreeing on column types are rejected', async () => {
  const plan = mustPlan('select x from t', cat);
  await assert.rejects(
    collect(plan, [leaf([field('x', INT8)], []), leaf([field('x', TEXT)], [])]),
    MergeError,
  );
});

test('a leaf that ends without CommandComplete is an error (no silent truncation)', async () => {
  const plan = mustPlan('select x from t', cat);
  const truncated = {
    async *[Symbol.asyncIterator]() {
      yield { kind: 'RowDescription' as const, fields: [field('x', INT8)] };
      yield { kind: 'DataRow' as const, values: [Buffer.from('1')] };
    },
  };
  await assert.rejects(collect(plan, [truncated]), MergeError);
});
