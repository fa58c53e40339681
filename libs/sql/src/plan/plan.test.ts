// planRead unit tests: refusals with their sentences, catalog checks, column placement, leaf SQL.
// The full plan shapes are golden files (golden.test.ts).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from '../parser.js';
import { SqlError } from '../errors.js';
import { planRead } from './plan.js';
import type { PlanNode, ReadPlan, ReadPlanResult } from './types.js';
import { testCatalog } from './testcatalog.testutil.js';

before(async () => {
  await initSqlParser();
});

function plan(sql: string, bytewise = true): ReadPlan {
  const p = planRead(sql, testCatalog(bytewise));
  assert.equal(p.kind, 'plan', p.kind === 'refuse' ? p.reason : '');
  return p as ReadPlan;
}

function refusal(sql: string): string {
  const p: ReadPlanResult = planRead(sql, testCatalog());
  assert.equal(p.kind, 'refuse', `expected a refusal for ${sql}`);
  return p.kind === 'refuse' ? p.reason : '';
}

function find<K extends PlanNode['kind']>(
  node: PlanNode,
  kind: K,
): Extract<PlanNode, { kind: K }> | undefined {
  if (node.kind === kind) return node as Extract<PlanNode, { kind: K }>;
  return 'input' in node ? find(node.input, kind) : undefined;
}

const REFUSED: Record<string, RegExp> = {
  'select id, rank() over (order by id) from t': /window functions/,
  'select id from t intersect select id from u': /set operations/,
  'select distinct on (a) a from t': /DISTINCT ON/,
  'select id from t for share': /FOR UPDATE/,
  'select array_agg(id) from t': /array_agg/,
  'select json_agg(t) from t': /json_agg/,
  'select percentile_cont(0.5) within group (order by a) from t': /percentile_cont/,
  'select sum(distinct a) from t': /only count\(DISTINCT x\)/,
  'select count(distinct a) filter (where b) from t': /only count\(DISTINCT x\)/,
  'select a, count(*) from t group by cube (a)': /ROLLUP, CUBE/,
  'select a, count(*) from t group by grouping sets ((a), ())': /ROLLUP, CUBE/,
  'select * from (select id from t) s': /subqueries in FROM/,
  'select id, (select count(*) from r) from t': /subqueries outside WHERE/,
  'select id from t where exists (select 1 from u where u.id = t.id)':
    /subquery over sharded table u/,
  'with c as (select 1) select id from t': /WITH queries/,
  'select id from t order by id limit 1 + 1': /LIMIT expressions/,
  "select id from t order by id limit '5'": /LIMIT must be an integer/,
  'select id from t order by id offset 2.5': /OFFSET must be an integer/,
  'select now(), id from t': /now\(\) differs between nodes/,
  'select current_timestamp, id from t': /date and time differ/,
  "select nextval('s'), id from t": /volatile/,
  'select * from t, g': /global table g/,
  'select * from nope': /not in the catalog/,
  'select * from r': /reads no sharded table/,
  'select * from t join o on t.id = o.id': /on their keys within one keyspace/,
  'select * from t, u': /on their keys/,
  'select * from t order by 1': /position together with \*/,
  'select a from t order by a using <': /USING/,
  'select a from t order by a collate "en_US"': /COLLATE "en_US"/,
  'select a as b, count(*) from t group by b': /select-list alias/,
  'select sum(a) * 2 from t': /expressions over aggregate results/,
  'select a, count(*) from t group by a having count(*) > $1': /HAVING/,
  "select a from t group by a having a like 'x%'": /HAVING/,
  'select 1, count(distinct a) from t': /count\(DISTINCT \.\.\.\) without GROUP BY/,
  'select distinct a from t order by b': /ORDER BY expressions must appear/,
  'select * from t; select * from u': /exactly one statement/,
  'insert into t values (1)': /only SELECT/,
  'select * from r left join t on t.a = r.a': /outer join that preserves/,
  'select * from t full join r on t.a = r.a': /outer join that preserves/,
  'select id from t order by id fetch first 2 rows with ties': /WITH TIES/,
};

for (const [sql, reason] of Object.entries(REFUSED))
  test(`refuses: ${sql}`, () => assert.match(refusal(sql), reason));

test('a syntax error throws SqlError 42601 as analyze() does', () => {
  assert.throws(
    () => planRead('select from where', testCatalog()),
    (e) => e instanceof SqlError && e.sqlstate === '42601',
  );
});

test('colocated joins and reference joins plan; outer joins preserving a sharded table too', () => {
  plan('select * from t join u using (id)');
  plan('select * from t left join u on u.id = t.id');
  plan('select * from t, u where t.id = u.id');
  plan('select * from t join r on r.a = t.a');
  plan('select * from t left join r on r.a = t.a');
});

test('sort keys: NULLS defaults, DESC, bytewise flag from the catalog or COLLATE "C"', () => {
  const keys =
    find(plan('select a, b from t order by a desc, b', false).root, 'merge_sort')?.keys ?? [];
  assert.deepEqual(keys, [
    { column: 0, descending: true, nullsFirst: true, bytewiseText: false },
    { column: 1, descending: false, nullsFirst: false, bytewiseText: false },
  ]);
  const c = find(
    plan('select a from t order by a collate "C" nulls first', false).root,
    'merge_sort',
  )?.keys[0];
  assert.deepEqual(c, { column: 1, descending: false, nullsFirst: true, bytewiseText: true });
});

test('ORDER BY a name matches output names first, as Postgres does', () => {
  // Output column "b" is t.a; ORDER BY b sorts by it, not by the input column b.
  const p = plan('select a as b, b as c from t order by b');
  assert.equal(find(p.root, 'merge_sort')?.keys[0]?.column, 0);
  assert.equal(find(p.root, 'project'), undefined);
  // `a::text` is named "a" too.
  assert.equal(
    find(plan('select a::text from t order by a').root, 'merge_sort')?.keys[0]?.column,
    0,
  );
});

test('columns after a * are placed from the end', () => {
  const p = plan('select *, a + 1 as x from t order by x, y');
  assert.deepEqual(
    find(p.root, 'merge_sort')?.keys.map((k) => k.column),
    [-2, -1],
  );
  assert.equal(find(p.root, 'scatter')?.columnCount, undefined);
  assert.equal(find(p.root, 'project')?.dropTrailing, 1);
});

test('LIMIT pushes count + offset to the nodes and keeps negative constants for them to reject', () => {
  assert.match(plan('select a from t order by a limit 5 offset 7').leafSql, /LIMIT 12$/);
  assert.match(plan('select a from t order by a limit -1').leafSql, /LIMIT -1$/);
  assert.match(
    plan('select a from t order by a limit 9223372036854775807 offset 1').leafSql,
    /ORDER BY a$/,
  );
  assert.match(plan('select a from t limit all').leafSql, /FROM t$/);
  const agg = plan('select a, count(*) from t group by a order by a limit 3');
  assert.doesNotMatch(agg.leafSql, /LIMIT/);
});

test('parameters the leaf does not use are left out and the rest renumbered', () => {
  const p = plan('select a, count(*) from t where b = $3 and c = $1 group by a limit $2');
  assert.deepEqual(p.leafParams, [0, 2]);
  assert.match(p.leafSql, /b = \$2 AND c = \$1/);
  assert.deepEqual(find(p.root, 'limit')?.count, { kind: 'param', index: 1 });
});

test('avg shares partial sum/count columns with sum(x) and count(x)', () => {
  const p = plan('select sum(a), count(a), avg(a) from t');
  assert.equal(find(p.root, 'scatter')?.columnCount, 2);
  assert.deepEqual(find(p.root, 'aggregate')?.columns, [
    { kind: 'aggregate', fn: 'sum', inputs: [0], name: 'sum' },
    { kind: 'aggregate', fn: 'count', inputs: [1], name: 'count' },
    { kind: 'aggregate', fn: 'avg', inputs: [0, 1], name: 'avg' },
  ]);
});

test('output names of aggregates: alias or the function name as written', () => {
  const cols =
    find(plan('select count(*) as "N", pg_catalog.max(a), every(b) from t').root, 'aggregate')
      ?.columns ?? [];
  assert.deepEqual(
    cols.map((c) => (c.kind === 'aggregate' ? c.name : '')),
    ['N', 'max', 'every'],
  );
});

test("count(DISTINCT x) adds x to the nodes' GROUP BY", () => {
  const p = plan('select a, count(distinct b), sum(c) from t group by a');
  assert.match(
    p.leafSql,
    /SELECT a, b AS _tessera_distinct_0, sum\(c\) AS _tessera_partial_1 FROM t GROUP BY 2, 1$/,
  );
  const agg = find(p.root, 'aggregate');
  assert.deepEqual(agg?.groupKeys, [0]);
});

test('plans are plain data (JSON round trip keeps everything)', () => {
  const p = plan('select a, avg(b) from t group by a having count(*) > 1 order by 2 desc limit 2');
  const again = JSON.parse(JSON.stringify(p)) as ReadPlan;
  assert.equal(JSON.stringify(again), JSON.stringify(p));
  assert.deepEqual(structuredClone(p), p);
});
