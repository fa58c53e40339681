import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from './parser.js';
import { replaceCalls } from './replace-calls.js';

const SIZES = new Set(['pg_table_size', 'pg_relation_size']);
const r = (sql: string): string =>
  replaceCalls(sql, SIZES, (name, args) =>
    args.length === 1
      ? `(CASE ${args[0]} WHEN 1 THEN 99 ELSE pg_catalog.${name}(${args[0]}) END)`
      : undefined,
  );

describe('replaceCalls', () => {
  before(() => initSqlParser());

  it('leaves a statement without such calls as it is', () => {
    assert.equal(r('select pg_total_relation_size(1)  '), 'select pg_total_relation_size(1)  ');
    assert.equal(r("select pg_relation_size('t', 'fsm')"), "select pg_relation_size('t', 'fsm')");
  });

  it('replaces calls, qualified or not, nested in others, and not inside their replacement', () => {
    assert.equal(
      r('select pg_catalog.pg_size_pretty(pg_catalog.pg_table_size(c.oid)) as s from pg_class c'),
      'SELECT pg_catalog.pg_size_pretty(CASE c.oid WHEN 1 THEN 99 ELSE pg_catalog.pg_table_size(c.oid) END) AS s FROM pg_class AS c',
    );
    assert.match(r("select pg_relation_size('t') > 0"), /^SELECT \(CASE 't' WHEN 1 THEN 99 ELSE/);
    assert.equal(r('select other.pg_table_size(1)'), 'select other.pg_table_size(1)');
  });
});
