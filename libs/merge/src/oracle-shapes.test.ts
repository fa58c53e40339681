// The query shapes of PlanOptions against real Postgres, as oracle.test.ts does for the base plans:
// expressions over aggregate results (types, scales, integer division, overflow and division by
// zero, numeric(p, s)), = ANY(ARRAY[...]), with every feature on. Names, type OIDs, text values,
// and for errors the SQLSTATE and message, must equal one Postgres holding every row.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres } from '@tessera/testkit';
import type { PgServer } from '@tessera/testkit';
import { ALL_PLAN_FEATURES, TRANSACTION_TIME_SQL, initSqlParser } from '@tessera/sql';
import type pg from 'pg';
import { WHOLE, runMerged, runWhole, setUpOracle } from './oracle.testutil.js';
import type { Oracle } from './oracle.testutil.js';

let server: PgServer;
let oracle: Oracle;

before(async () => {
  await initSqlParser();
  server = await startPostgres({ name: 'merge-oracle-shapes' });
  oracle = await setUpOracle(server);
});

after(async () => {
  await oracle?.close();
  await server?.dispose();
});

type Expect = 'ordered' | 'set' | 'error';

const CASES: Record<string, [string, Expect]> = {
  'count(*)::int': ['select count(*)::int from t', 'set'],
  'count(*)::int4 by group': ['select grp, count(*)::int4 as n from t group by grp', 'set'],
  'count(*)::smallint': ['select count(*)::smallint from t', 'set'],
  'count(*)::text': ['select count(*)::text, sum(amount)::text from t', 'set'],
  'coalesce(sum(int), 0)': ['select coalesce(sum(score), 0) from t', 'set'],
  'coalesce(sum(numeric), 0) empty': ['select coalesce(sum(amount), 0) as s from e', 'set'],
  'coalesce(sum(int), 0) empty': [
    'select coalesce(sum(score), 0), coalesce(max(small), 7) from e',
    'set',
  ],
  'coalesce over groups with nulls': [
    'select grp, coalesce(sum(score), -1), coalesce(min(small), max(small), 0) from t group by grp',
    'set',
  ],
  'sum / count integer division': ['select sum(score) / count(*) from t', 'set'],
  'sum / count per group': [
    'select grp, sum(score) / count(*), sum(score) % count(*) from t group by grp',
    'set',
  ],
  'numeric / count': ['select sum(amount) / count(*), sum(num) / count(num) from t', 'set'],
  'numeric % int': ['select sum(amount) % 7, sum(num) % 0.3 from t', 'set'],
  'round(avg, 2)': [
    'select round(avg(score), 2), round(avg(amount), 1), round(avg(num)) from t',
    'set',
  ],
  'round negative digits': ['select round(sum(amount), -2), trunc(sum(amount), -1) from t', 'set'],
  'round(int sum, 2)': ['select grp, round(sum(score), 2) from t group by grp', 'set'],
  'trunc(avg, 3)': ['select trunc(avg(amount), 3), trunc(avg(score)) from t', 'set'],
  'arithmetic of aggregates': [
    'select grp, max(score) - min(score) + 1 as spread, count(*) * 2, -sum(small) from t group by grp',
    'set',
  ],
  'int2 arithmetic stays int2': [
    'select max(small) + min(small), max(small) * 2::int2 from t',
    'set',
  ],
  'mixed widths': [
    'select max(small) + max(score), max(score) + count(*), max(big) - 1 from t',
    'set',
  ],
  'numeric times numeric': ['select sum(amount) * avg(num), avg(amount) * 3 from t', 'set'],
  'numeric(p, s) cast': [
    'select avg(amount)::numeric(10, 2), sum(score)::numeric(12, 3) from t',
    'set',
  ],
  nullif: ['select sum(score) / nullif(count(*), 0), nullif(max(small), 98) from t', 'set'],
  'nullif guards an empty table': ['select sum(score) / nullif(count(*), 0) from e', 'set'],
  'numeric literal': ['select sum(score) * 1.5, count(*) + 0.25 from t', 'set'],
  'big literal': ['select count(*) + 3000000000, count(*) + 99999999999999999999 from t', 'set'],
  'group key in expression': [
    'select score % 4, (score % 4) * count(*) from t group by score % 4',
    'set',
  ],
  'having over an expression': [
    'select grp, count(*) from t group by grp having sum(score) / count(*) > 10',
    'set',
  ],
  'order by an expression, limit': [
    'select grp from t group by grp order by coalesce(sum(score), 0) desc, grp nulls first limit 4',
    'ordered',
  ],
  'order by a select-list expression': [
    'select grp, count(*)::int as n from t group by grp order by n, grp nulls first',
    'ordered',
  ],
  'distinct over expressions': ['select distinct count(*) % 3 from t group by grp', 'set'],
  'division by zero': ['select sum(score) / (count(*) - count(*)) from t', 'error'],
  'numeric division by zero': ['select sum(amount) / (count(*) - count(*)) from t', 'error'],
  'modulo by zero': ['select count(*) % 0 from t', 'error'],
  'int8 overflow': ['select max(big) * 100000 from t', 'error'],
  'int4 overflow': ['select count(*)::int * 2147483647 from t', 'error'],
  'int2 cast overflow': ['select (count(*) * 1000)::int2 from t', 'error'],
  'numeric field overflow': ['select sum(amount)::numeric(3, 1) from t', 'error'],
  'numeric to int rounds': ['select (avg(score) * 10)::int, avg(amount)::int8 from t', 'set'],
  'count over distinct subquery': ['select count(*) from (select distinct grp from t) s', 'set'],
  'count over distinct subquery with key': [
    'select count(*) as n from (select distinct id, grp from t where score > 1) s',
    'set',
  ],
  'sqlalchemy count': [
    'select count(*) as count_1 from (select t.id as t_id, t.name as t_name from t where t.score > 5) as anon_1',
    'set',
  ],
  'count over a limited subquery': [
    'select count(*) from (select id from t order by id limit 10 offset 295) s',
    'set',
  ],
  'count over grouped subquery': [
    'select count(*) from (select grp, count(*) from t group by grp) s',
    'set',
  ],
  'subquery grouped by key': [
    'select s.id, s.n from (select id, count(*) as n from t group by id) s where s.n >= 1 order by s.id limit 5',
    'ordered',
  ],
  'aggregate over keyed subquery': [
    'select count(*), sum(n), max(m) from (select id, count(*) as n, max(score) as m from t group by id) s',
    'set',
  ],
  'cte colocated': [
    'with x as (select id, grp from t where score > 3) select grp, count(*) from x group by grp',
    'set',
  ],
  'cte pinned': [
    'with x as (select id, grp from t where id = 64) select * from x join r on r.code = x.grp',
    'set',
  ],
  'subquery joined with a reference table': [
    'select s.name, g.label from (select id, grp, name from t) s join r g on g.code = s.grp',
    'set',
  ],
  'union all ordered, limited': [
    'select id from t union all select id from huge order by 1 desc limit 7',
    'ordered',
  ],
  'union all plain': [
    'select id, grp from t where id < 50 union all select id, null from huge',
    'set',
  ],
  'union distinct': ['select grp from t union select grp from t where id > 100', 'set'],
  'union distinct with a reference branch': ['select grp from t union select code from r', 'set'],
  'union ordered with offset': [
    'select score from t union select n from huge order by 1 nulls first offset 3 limit 10',
    'ordered',
  ],
  'any(array) rows': ['select id, name from t where id = any(array[1, 2, 3, 250])', 'set'],
  'any(array) aggregate': [
    'select count(*), sum(score) from t where id = any(array[5, 6, 7, 8, 9])',
    'set',
  ],
};

for (const [name, [sql, expect]] of Object.entries(CASES)) {
  test(`shape oracle: ${name}`, async () => {
    const whole = await runWhole(oracle, sql, []);
    const merged = await runMerged(oracle, sql, [], ALL_PLAN_FEATURES);
    const why = `${sql}\nwhole: ${JSON.stringify(whole).slice(0, 600)}\nmerged: ${JSON.stringify(merged).slice(0, 600)}`;
    if (expect === 'error') {
      assert.equal(whole.kind, 'error', why);
      assert.equal(merged.kind, 'error', why);
      assert.equal(merged.code, whole.code, why);
      assert.equal(merged.message, whole.message, why);
      return;
    }
    assert.equal(whole.kind, 'rows', why);
    assert.equal(merged.kind, 'rows', why);
    assert.deepEqual(merged.names, whole.names, why);
    assert.deepEqual(merged.types, whole.types, why);
    const sorted = (rows: readonly (string | null)[][] = []) =>
      rows.map((r) => JSON.stringify(r)).sort();
    if (expect === 'ordered') assert.deepEqual(merged.rows, whole.rows, why);
    else assert.deepEqual(sorted(merged.rows), sorted(whole.rows), why);
  });
}

test('without the option, expressions over aggregates are still refused', async () => {
  const merged = await runMerged(oracle, 'select count(*)::int from t', []);
  assert.equal(merged.kind, 'refused');
});

const TIME_CASES: Record<string, string> = {
  'now() in the select list': 'select id, now(), transaction_timestamp() from t where id < 5',
  'current_timestamp(p), localtimestamp(p), current_time(p), localtime': `select id, current_timestamp(2),
     localtimestamp(3), current_time(1), localtime, current_time from t where id < 4`,
  'current_date grouped': `select count(*), current_date from t where created < current_date group by 2`,
  'rows of the last year': `select count(*) from t where ts > now() - interval '5 years'`,
  'time functions in ORDER BY and HAVING': `select grp, max(tz) from t group by grp
     having max(tz) < now() order by grp nulls first`,
};

for (const [name, sql] of Object.entries(TIME_CASES)) {
  test(`shape oracle, transaction time: ${name}`, async () => {
    // The whole database's transaction gives the instant; the nodes get it bound as a literal.
    const whole = oracle.clients.get(WHOLE) as pg.Client;
    await whole.query('begin');
    try {
      const ts = (
        await whole.query<{ t: string }>(TRANSACTION_TIME_SQL.replace("|| '+00'", "|| '+00' as t"))
      ).rows[0]?.t;
      assert.ok(ts !== undefined);
      const w = await runWhole(oracle, sql, []);
      const merged = await runMerged(oracle, sql, [], ALL_PLAN_FEATURES, ts);
      const why = `${sql}\nwhole: ${JSON.stringify(w).slice(0, 600)}\nmerged: ${JSON.stringify(merged).slice(0, 600)}`;
      assert.equal(w.kind, 'rows', why);
      assert.equal(merged.kind, 'rows', why);
      assert.deepEqual(merged.names, w.names, why);
      assert.deepEqual(merged.types, w.types, why);
      const sorted = (rows: readonly (string | null)[][] = []) =>
        rows.map((r) => JSON.stringify(r)).sort();
      assert.deepEqual(sorted(merged.rows), sorted(w.rows), why);
    } finally {
      await whole.query('commit');
    }
  });
}
