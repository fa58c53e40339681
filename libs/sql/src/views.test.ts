import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from './parser.js';
import { substituteViews, type ViewQueryOf } from './views.js';

const VIEWS: Record<string, string> = {
  totals: 'SELECT currency, count(*) AS n FROM public.accounts GROUP BY currency',
  'public.big': 'SELECT * FROM public.accounts WHERE balance > 100',
  over: 'SELECT n FROM totals',
};
const of: ViewQueryOf = (schema, name) =>
  VIEWS[schema === undefined ? name : `${schema}.${name}`] ??
  (schema === undefined ? VIEWS[`public.${name}`] : undefined);
const s = (sql: string): string => substituteViews(sql, of);

describe('substituteViews', () => {
  before(() => initSqlParser());

  it('leaves a statement without views as it is', () => {
    const sql = 'select * from accounts  where id = 1';
    assert.equal(s(sql), sql);
  });

  it('puts the query in the FROM list under the view name or its alias', () => {
    assert.equal(
      s('select count(*) from totals'),
      'SELECT count(*) FROM ( SELECT currency, count(*) AS n FROM public.accounts GROUP BY currency ) AS totals',
    );
    assert.equal(
      s('select t.n from totals t join big b on b.currency = t.currency order by 1'),
      'SELECT t.n FROM ( SELECT currency, count(*) AS n FROM public.accounts GROUP BY currency ) AS t JOIN ( SELECT * FROM public.accounts WHERE balance > 100 ) AS b ON b.currency = t.currency ORDER BY 1',
    );
  });

  it('reaches views inside views, subqueries, CTE bodies and other statements reading them', () => {
    assert.match(
      s('select * from over'),
      /FROM \( SELECT n FROM \( SELECT currency.*\) AS totals \) AS over$/,
    );
    const many = s(
      'with w as (select * from big) select * from w where exists (select 1 from totals) union all select * from public.big',
    );
    assert.equal(many.match(/FROM public\.accounts/g)?.length, 3);
    assert.match(
      s('copy (select * from totals) to stdout'),
      /^COPY \(SELECT \* FROM \( SELECT currency/,
    );
    assert.match(
      s('update t set x = 1 from totals where t.c = totals.currency'),
      /FROM \( SELECT currency/,
    );
  });

  it('leaves write targets, names a CTE hides and other schemas alone', () => {
    assert.equal(s('delete from totals'), 'delete from totals');
    assert.equal(s('insert into big values (1)'), 'insert into big values (1)');
    assert.equal(
      s('with totals as (select 1) select * from totals'),
      'with totals as (select 1) select * from totals',
    );
    assert.equal(s('select * from other.totals'), 'select * from other.totals');
  });
});
