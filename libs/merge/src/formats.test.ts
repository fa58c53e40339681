// Which leaf columns a read across nodes asks the nodes for in text and which in binary, from the
// client's result formats and the plan: text only where a text column passes a node's bytes on.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from '@tessera/sql';
import { leafResultFormats } from './formats.js';
import { MergeError } from './errors.js';
import { catalog, mustPlan } from './testutil.testutil.js';

const cat = catalog(['t']);

before(async () => {
  await initSqlParser();
});

const formats = (sql: string, client: number[]): number[] =>
  leafResultFormats(mustPlan(sql, cat), client);

test('all text stays text; all binary asks every leaf column in binary', () => {
  assert.deepEqual(formats('select a, b from t order by a', []), []);
  assert.deepEqual(formats('select a, b from t order by a', [0]), []);
  assert.deepEqual(formats('select a, b from t order by a', [0, 0]), []);
  assert.deepEqual(formats('select a, count(*) from t group by a', [1]), [1]);
  assert.deepEqual(formats('select * from t order by a', [1]), [1]);
});

test('per column: text where a text column passes a node value on, binary everywhere else', () => {
  assert.deepEqual(formats('select a, b from t', [0, 1]), [0, 1]);
  // A hidden sort key comes in binary.
  assert.deepEqual(formats('select a from t order by b', [0]), []);
  assert.deepEqual(formats('select a, b from t order by c', [1, 0]), [1, 0, 1]);
  // Partial aggregates are binary; the group key and min pass through as the client asked.
  assert.deepEqual(formats('select a, count(*), min(b) from t group by a', [0, 0, 1]), [0, 1, 1]);
  assert.deepEqual(formats('select a, count(*), min(b) from t group by a', [1, 0, 0]), [1, 1, 0]);
  // A `*` leaf is as wide as the client's list plus the hidden columns.
  assert.deepEqual(formats('select *, a + 1 as b from t order by b, c', [0, 1, 0]), [0, 1, 0, 1]);
});

test('a node column feeding columns asked in both formats comes in text', () => {
  assert.deepEqual(formats('select max(x), max(x) from t', [0, 1]), [0]);
  assert.deepEqual(formats('select max(x), max(x) from t', [1, 1]), [1]);
});

test('nothing passed through in text: one binary code', () => {
  assert.deepEqual(formats('select a, count(*) from t group by a', [1, 0]), [1]);
  assert.deepEqual(formats('select count(*), sum(b) from t', [0, 0, 0].slice(0, 2)), []);
  assert.deepEqual(formats('select count(*), sum(b) from t', [0, 1]), [1]);
});

test('a format list longer than any row asks the nodes for text (the count is checked later)', () => {
  assert.deepEqual(
    formats(
      'select * from t',
      Array.from({ length: 70_000 }, (_, i) => i % 2),
    ),
    [],
  );
});

test('a format count that fits no column list is the error Postgres gives', () => {
  assert.throws(
    () => formats('select a, b from t', [0, 1, 1]),
    (e) =>
      e instanceof MergeError &&
      e.sqlstate === '08P01' &&
      e.message === 'bind message has 3 result formats but query has 2 columns',
  );
});
