// Where an INSERT's VALUES items sit (insertLayout) and SELECTs of sequence calls
// (sequenceCallSelect): what the router needs to write its own values into a statement.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { initSqlParser } from './index.js';
import { insertLayout } from './insert-layout.js';
import { sequenceCallSelect } from './sequence-calls.js';

await initSqlParser();

test('insertLayout finds the column list, VALUES and each item', () => {
  const sql = "insert into t (a, b) values (1, default), (nextval('t_a_seq'::regclass), 'x, y')";
  const l = insertLayout(sql)!;
  assert.equal(sql.slice(l.valuesAt, l.valuesAt + 6), 'values');
  assert.equal(sql[l.columnsCloseAt!], ')');
  assert.equal(sql.slice(0, l.afterTargetAt), 'insert into t');
  assert.deepEqual(
    l.rows.map((r) => r.items.map((i) => [i.kind, sql.slice(i.start, i.end)])),
    [
      [
        ['other', '1'],
        ['default', 'default'],
      ],
      [
        ['nextval', "nextval('t_a_seq'::regclass)"],
        ['other', "'x, y'"],
      ],
    ],
  );
  const n = l.rows[1]!.items[0]!;
  assert.equal(n.kind === 'nextval' ? n.sequence : '', 't_a_seq');
  assert.equal(sql[l.rows[0]!.closeAt], ')');
});

test('insertLayout without a column list, with OVERRIDING and a function call', () => {
  const sql = 'insert into public.t as x overriding system value values (f(1, 2), $1) returning *';
  const l = insertLayout(sql)!;
  assert.equal(l.columnsCloseAt, undefined);
  assert.equal(sql.slice(0, l.afterTargetAt), 'insert into public.t as x');
  assert.deepEqual(
    l.rows[0]!.items.map((i) => sql.slice(i.start, i.end)),
    ['f(1, 2)', '$1'],
  );
  assert.equal(insertLayout('insert into t select 1'), undefined);
  assert.equal(insertLayout('insert into t default values'), undefined);
});

test('sequenceCallSelect takes only a select list of sequence calls', () => {
  const calls = sequenceCallSelect("select nextval('s'), currval('public.s') as c, lastval()")!;
  assert.deepEqual(
    calls.map((c) => [c.fn, c.sequence, c.aliased]),
    [
      ['nextval', 's', false],
      ['currval', 'public.s', true],
      ['lastval', undefined, false],
    ],
  );
  assert.equal(sequenceCallSelect('select nextval($1::regclass)')![0]!.param, 0);
  assert.equal(sequenceCallSelect("select setval('s', 5)")![0]!.fn, 'setval');
  for (const sql of [
    "select nextval('s') from t",
    "select nextval('s') + 1",
    'select 1',
    "select nextval('s') where true",
  ])
    assert.equal(sequenceCallSelect(sql), undefined, sql);
});
