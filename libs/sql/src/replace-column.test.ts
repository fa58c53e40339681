import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from './parser.js';
import { replaceColumn, type ColumnTarget } from './replace-column.js';

const CHECKS: ColumnTarget = {
  relation: 'pg_class',
  column: 'relchecks',
  expression: (q) => `(${q}.relchecks - 1)::int2`,
};
const r = (sql: string): string => replaceColumn(sql, CHECKS);

describe('replaceColumn', () => {
  before(() => initSqlParser());

  it('leaves statements that do not read the column alone', () => {
    assert.equal(r('select relname from pg_class'), 'select relname from pg_class');
    assert.equal(r('select relchecks from other'), 'select relchecks from other');
  });

  it('replaces qualified and unqualified reads, keeping the select-list name', () => {
    assert.equal(
      r("SELECT c.relchecks, c.relkind FROM pg_catalog.pg_class c WHERE c.oid = '1'"),
      "SELECT CAST(c.relchecks - 1 AS int2) AS relchecks, c.relkind FROM pg_catalog.pg_class AS c WHERE c.oid = '1'",
    );
    assert.equal(
      r('select relchecks as n from pg_class where relchecks > 0'),
      'SELECT CAST(pg_class.relchecks - 1 AS int2) AS n FROM pg_class WHERE CAST(pg_class.relchecks - 1 AS int2) > 0',
    );
  });

  it('reaches correlated subqueries and joins, and leaves other relations named alike', () => {
    assert.match(
      r(
        'select (select c.relchecks from pg_namespace n where n.oid = c.relnamespace) from pg_class c join pg_index i on i.indrelid = c.oid',
      ),
      /SELECT \(SELECT CAST\(c\.relchecks - 1 AS int2\) AS relchecks FROM pg_namespace/,
    );
    assert.equal(
      r('select t.relchecks from pg_class c, t'),
      'select t.relchecks from pg_class c, t',
    );
  });
});
