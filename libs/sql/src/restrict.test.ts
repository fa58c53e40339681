import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from './parser.js';
import { restrictTables, type RestrictionOf } from './restrict.js';

const owned: RestrictionOf = (schema, name) =>
  name === 'accounts' && (schema === undefined || schema === 'public')
    ? (q) =>
        `hashint8extended(${q === undefined ? '' : `${q}.`}id, '0'::int8) BETWEEN '0'::int8 AND '9'::int8`
    : undefined;

const r = (sql: string): string => restrictTables(sql, owned);
const OWN = "hashint8extended(id, '0'::int8) BETWEEN '0'::int8 AND '9'::int8";

describe('restrictTables', () => {
  before(() => initSqlParser());

  it('leaves a statement without restricted tables as it is', () => {
    const sql = 'select * from orders  where x = 1';
    assert.equal(r(sql), sql);
  });

  it('turns a FROM reference into a subquery of the owned rows, keeping its alias', () => {
    assert.equal(
      r('select id, balance from accounts order by id'),
      `SELECT id, balance FROM ( SELECT * FROM accounts WHERE ${OWN} ) AS accounts ORDER BY id`,
    );
    assert.equal(
      r('select count(*) from public.accounts a(x) join orders o on o.id = a.x'),
      `SELECT count(*) FROM ( SELECT * FROM public.accounts WHERE ${OWN} ) AS a(x) JOIN orders AS o ON o.id = a.x`,
    );
  });

  it('reaches joins, subqueries, set operations and CTE bodies', () => {
    const out = r(
      'with w as (select id from accounts) select * from orders left join accounts on true ' +
        'where exists (select 1 from accounts b where b.id = orders.id) union all select 1 from w, (select * from accounts) s',
    );
    assert.equal(out.match(/SELECT \* FROM accounts WHERE/g)?.length, 4);
  });

  it('ANDs the predicate to an UPDATE or DELETE target, qualified by its alias', () => {
    assert.equal(
      r('update accounts a set balance = 0 where balance > 5'),
      `UPDATE accounts AS a SET balance = 0 WHERE balance > 5 AND hashint8extended(a.id, '0'::int8) BETWEEN '0'::int8 AND '9'::int8`,
    );
    assert.match(
      r('delete from accounts'),
      /^DELETE FROM accounts WHERE hashint8extended\(accounts\.id/,
    );
    assert.match(
      r('delete from accounts where id > 1 and balance = 2'),
      /^DELETE FROM accounts WHERE id > 1 AND balance = 2 AND hashint8extended\(accounts\.id/,
    );
  });

  it('refuses what it cannot rewrite', () => {
    assert.throws(() => r('select * from accounts tablesample system (10)'), { sqlstate: '0A000' });
    assert.throws(() => r('select ctid, id from accounts'), { sqlstate: '0A000' });
    assert.equal(r('select ctid from orders'), 'select ctid from orders');
    assert.throws(() => r('with accounts as (select 1) select * from accounts'), {
      sqlstate: '0A000',
    });
  });
});

describe('restrictTables keeping system columns', () => {
  const hidden: RestrictionOf = (schema, name) =>
    name === 'pg_constraint' && (schema === undefined || schema === 'pg_catalog')
      ? () => "NOT (conname = 'tessera_owns' AND contype = 'c')"
      : undefined;
  const h = (sql: string): string => restrictTables(sql, hidden, true);

  it('selects the system columns the statement names after the subquery *', () => {
    assert.equal(
      h("SELECT c.tableoid, c.oid, conname FROM pg_catalog.pg_constraint c WHERE contype = 'c'"),
      "SELECT c.tableoid, c.oid, conname FROM ( SELECT *, tableoid FROM pg_catalog.pg_constraint WHERE NOT (conname = 'tessera_owns' AND contype = 'c') ) AS c WHERE contype = 'c'",
    );
    assert.match(
      h('select conname from pg_constraint r where r.conrelid = 1'),
      /FROM \( SELECT \* FROM pg_constraint WHERE .* \) AS r WHERE/,
    );
  });

  it('refuses a * together with a system column, which would show it', () => {
    assert.throws(() => h('select *, tableoid from pg_constraint'), { sqlstate: '0A000' });
  });
});
