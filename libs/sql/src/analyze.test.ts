// Table-driven: every statement kind maps to the right Analysis variant with its details.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { initSqlParser, analyze, analyzeAll } from './index.js';
import { assertSubset } from './subset.testutil.js';

await initSqlParser();

const cases: Array<[string, Record<string, unknown>]> = [
  // SELECT
  ['select 1', { kind: 'select', tables: [], shape: { hasFrom: false } }],
  [
    'select * from t',
    { kind: 'select', tables: [{ name: 't', schema: undefined, role: 'read', scope: 'top' }] },
  ],
  ['SELECT * FROM Public.Users u', { tables: [{ schema: 'public', name: 'users', alias: 'u' }] }],
  ['select * from "MySchema"."Users"', { tables: [{ schema: 'MySchema', name: 'Users' }] }],
  ['select * from only t', { tables: [{ name: 't', only: true }] }],
  [
    'select a, count(*) from t group by a having count(*) > 1 order by a limit 10 offset 5',
    {
      shape: {
        aggregates: ['count'],
        hasGroupBy: true,
        hasHaving: true,
        hasOrderBy: true,
        limit: { kind: 'const', text: '10' },
        offset: { kind: 'const', text: '5' },
      },
    },
  ],
  [
    'select sum(x), avg(y), max(z) from t',
    { shape: { aggregates: ['sum', 'avg', 'max'], hasGroupBy: false } },
  ],
  [
    'select * from t limit $1 offset $2',
    {
      paramCount: 2,
      shape: { limit: { kind: 'param', index: 0 }, offset: { kind: 'param', index: 1 } },
    },
  ],
  ['select * from t limit all', { shape: { limit: undefined } }],
  ['select * from t fetch first 3 rows only', { shape: { limit: { kind: 'const', text: '3' } } }],
  ['select distinct a from t', { shape: { hasDistinct: true, hasDistinctOn: false } }],
  [
    'select distinct on (a) a, b from t order by a, b',
    { shape: { hasDistinct: true, hasDistinctOn: true, hasOrderBy: true } },
  ],
  ['select * from t for update', { shape: { hasLocking: true } }],
  ['select * from t for share skip locked', { shape: { hasLocking: true } }],
  [
    'select row_number() over (order by a) from t',
    { shape: { hasWindowFunctions: true, aggregates: [] } },
  ],
  ['select count(*) over () from t', { shape: { hasWindowFunctions: true, aggregates: [] } }],
  [
    'select a from t union select a from u',
    {
      shape: { hasSetOperations: true },
      tables: [
        { name: 't', scope: 'nested' },
        { name: 'u', scope: 'nested' },
      ],
    },
  ],
  [
    'select a from t intersect all select a from u except select a from v',
    { shape: { hasSetOperations: true } },
  ],
  [
    'select * from t where id in (select id from u)',
    {
      hasSubqueries: true,
      tables: [
        { name: 't', scope: 'top' },
        { name: 'u', scope: 'nested' },
      ],
    },
  ],
  ['select (select max(x) from u) from t', { hasSubqueries: true, shape: { aggregates: [] } }],
  [
    'select * from (select * from u) s',
    { hasSubqueries: true, tables: [{ name: 'u', scope: 'nested' }] },
  ],
  [
    'select * from t where exists (select 1 from u where u.id = t.id)',
    { hasSubqueries: true, tables: [{ name: 't' }, { name: 'u' }] },
  ],
  [
    'with x as (select * from a) select * from x',
    { hasCtes: true, tables: [{ name: 'a', scope: 'nested' }] },
  ],
  ['with x as (select 1) select * from public.x', { tables: [{ schema: 'public', name: 'x' }] }],
  [
    'with recursive r(n) as (select 1 union all select n + 1 from r where n < 5) select * from r',
    { hasCtes: true, tables: [] },
  ],
  [
    'with a as (select * from b), b as (select * from a) select * from b',
    { tables: [{ name: 'b', scope: 'nested' }] },
  ],
  [
    'with d as (delete from t where id = 1 returning *) select * from d',
    {
      kind: 'select',
      hasDataModifyingCtes: true,
      tables: [{ name: 't', role: 'target', scope: 'nested' }],
    },
  ],
  [
    'select random(), now(), lower(x) from t',
    { functions: ['random', 'now', 'lower'], hasVolatileFunctions: true },
  ],
  ['select now()', { functions: ['now'], hasVolatileFunctions: false }],
  ["select nextval('s')", { hasVolatileFunctions: true }],
  ['values (1), (2)', { kind: 'select', shape: { isValues: true } }],
  ['table t', { kind: 'select', tables: [{ name: 't' }] }],
  [
    'select * from t, lateral generate_series(1, t.n) g',
    { tables: [{ name: 't' }], functions: ['generate_series'] },
  ],
  ['select * from t tablesample system (10)', { tables: [{ name: 't', scope: 'top' }] }],
  ['select * from t where a = $3', { paramCount: 3 }],
  [
    'select percentile_cont(0.5) within group (order by x) from t',
    { shape: { aggregates: ['percentile_cont'] } },
  ],
  [
    "select string_agg(distinct a, ',') filter (where b) from t",
    { shape: { aggregates: ['string_agg'] } },
  ],
  // UPDATE / DELETE
  [
    'update t set a = 1, b = $1 where id = $2',
    {
      kind: 'update',
      targetIndex: 0,
      setColumns: ['a', 'b'],
      paramCount: 2,
      tables: [{ name: 't', role: 'target', scope: 'top' }],
    },
  ],
  ['update t set (a, b) = (1, 2) where id = 3', { setColumns: ['a', 'b'] }],
  [
    'update t set a = u.a from u where t.id = u.id returning t.*',
    {
      hasFrom: true,
      hasReturning: true,
      tables: [
        { name: 't', role: 'target' },
        { name: 'u', role: 'read', scope: 'top' },
      ],
    },
  ],
  ['update t set a = 1 where current of c', { where: { isCurrentOf: true, pins: [] } }],
  [
    'delete from t where id = 1',
    { kind: 'delete', targetIndex: 0, tables: [{ name: 't', role: 'target' }], hasUsing: false },
  ],
  [
    'delete from t using u where t.id = u.id',
    {
      hasUsing: true,
      tables: [
        { name: 't', role: 'target' },
        { name: 'u', role: 'read' },
      ],
    },
  ],
  ['delete from t returning *', { hasReturning: true, where: { hasWhere: false } }],
  [
    'with x as (select id from u) delete from t where id in (select id from x)',
    {
      tables: [
        { name: 'u', scope: 'nested' },
        { name: 't', role: 'target' },
      ],
    },
  ],
  // Transactions
  ['begin', { kind: 'transaction', action: 'begin', keyword: 'begin' }],
  [
    'start transaction isolation level repeatable read',
    { action: 'begin', keyword: 'start', isolationLevel: 'repeatable read' },
  ],
  [
    'begin isolation level serializable read only deferrable',
    { isolationLevel: 'serializable', readOnly: true, deferrable: true },
  ],
  ['begin read write', { readOnly: false }],
  ['commit', { action: 'commit', keyword: 'commit', chain: false }],
  ['end', { action: 'commit', keyword: 'end' }],
  ['commit and chain', { action: 'commit', chain: true }],
  ['rollback', { action: 'rollback', keyword: 'rollback' }],
  ['abort', { action: 'rollback', keyword: 'abort' }],
  ['savepoint s1', { action: 'savepoint', savepoint: 's1' }],
  ['release savepoint s1', { action: 'release', savepoint: 's1' }],
  ['release s1', { action: 'release', savepoint: 's1' }],
  ['rollback to savepoint s1', { action: 'rollback_to', savepoint: 's1' }],
  [
    "prepare transaction 'tessera:1:2:n1'",
    { action: 'prepare_transaction', gid: 'tessera:1:2:n1' },
  ],
  ["commit prepared 'g1'", { action: 'commit_prepared', gid: 'g1' }],
  ["rollback prepared 'g1'", { action: 'rollback_prepared', gid: 'g1' }],
  // SET / RESET / SHOW
  [
    'set search_path = a, b',
    {
      kind: 'set',
      action: 'set',
      name: 'search_path',
      isLocal: false,
      values: ['a', 'b'],
      replay: 'set search_path = a, b',
    },
  ],
  [
    'set local statement_timeout = 5000',
    { action: 'set', name: 'statement_timeout', isLocal: true, values: ['5000'] },
  ],
  ["SET TIME ZONE 'UTC'", { name: 'timezone', values: ['UTC'] }],
  ['set search_path to default', { action: 'set_default', name: 'search_path' }],
  ['reset work_mem', { action: 'reset', name: 'work_mem' }],
  ['reset all', { action: 'reset_all', name: undefined }],
  [
    'set transaction isolation level serializable',
    { action: 'set_multi', name: 'transaction', values: ['transaction_isolation=serializable'] },
  ],
  ['set role admin', { action: 'set', name: 'role' }],
  ['set session authorization default', { action: 'set_default', name: 'session_authorization' }],
  ['set constraints all deferred', { kind: 'set', action: 'set_constraints', isLocal: true }],
  ['show search_path', { kind: 'show', name: 'search_path' }],
  ['show all', { kind: 'show', name: 'all' }],
  ['show time zone', { kind: 'show', name: 'timezone' }],
  // EXPLAIN / PREPARE / EXECUTE / DEALLOCATE
  [
    'explain select * from t where id = 1',
    {
      kind: 'explain',
      analyze: false,
      inner: {
        kind: 'select',
        sql: 'select * from t where id = 1',
        where: { pins: [{ table: 't', column: 'id' }] },
      },
      tables: [{ name: 't' }],
    },
  ],
  [
    'explain analyze delete from t where id = 2',
    {
      analyze: true,
      options: ['analyze'],
      inner: { kind: 'delete', sql: 'delete from t where id = 2' },
    },
  ],
  [
    'explain (analyze false, format json) select 1',
    { analyze: false, options: ['analyze', 'format'], inner: { sql: 'select 1' } },
  ],
  [
    'explain (costs off) /* c */ update t set a = 1',
    { inner: { kind: 'update', sql: 'update t set a = 1' } },
  ],
  [
    'prepare p (bigint, text) as select * from t where id = $1',
    {
      kind: 'prepare',
      name: 'p',
      paramTypes: ['int8', 'text'],
      inner: { kind: 'select', sql: 'select * from t where id = $1', paramCount: 1 },
    },
  ],
  [
    'prepare q as insert into t values ($1)',
    { inner: { kind: 'insert', sql: 'insert into t values ($1)', rowSlices: ['($1)'] } },
  ],
  [
    "execute p (1, 'x', $1, now())",
    {
      kind: 'execute',
      name: 'p',
      params: [
        { kind: 'const', text: '1' },
        { kind: 'const', text: 'x' },
        { kind: 'param', index: 0 },
        { kind: 'expr' },
      ],
    },
  ],
  ['deallocate p', { kind: 'deallocate', name: 'p' }],
  ['deallocate prepare p', { kind: 'deallocate', name: 'p' }],
  ['deallocate all', { kind: 'deallocate', name: undefined }],
  // DISCARD / LISTEN / NOTIFY
  ['discard all', { kind: 'discard', target: 'all' }],
  ['discard plans', { target: 'plans' }],
  ['discard sequences', { target: 'sequences' }],
  ['discard temp', { target: 'temp' }],
  ['listen ch', { kind: 'listen', channel: 'ch' }],
  ['unlisten ch', { kind: 'unlisten', channel: 'ch' }],
  ['unlisten *', { kind: 'unlisten', channel: undefined }],
  ["notify ch, 'hello'", { kind: 'notify', channel: 'ch', payload: 'hello' }],
  ['notify ch', { kind: 'notify', payload: undefined }],
  // VACUUM / ANALYZE
  ['vacuum', { kind: 'vacuum', tables: [], options: [] }],
  [
    'vacuum (full, analyze) t, s.u (a)',
    {
      kind: 'vacuum',
      options: ['full', 'analyze'],
      tables: [
        { name: 't', role: 'target' },
        { schema: 's', name: 'u', role: 'target' },
      ],
    },
  ],
  ['analyze verbose t', { kind: 'analyze', options: ['verbose'], tables: [{ name: 't' }] }],
  ['analyze', { kind: 'analyze', tables: [] }],
  // Utility
  [
    'lock table t in exclusive mode',
    { kind: 'utility', command: 'lock', tables: [{ name: 't', role: 'target' }] },
  ],
  [
    'declare c cursor for select * from t where id = 1',
    {
      kind: 'utility',
      command: 'declare_cursor',
      tables: [{ name: 't' }],
      query: { kind: 'select', sql: 'select * from t where id = 1' },
    },
  ],
  [
    'declare c scroll binary cursor with hold for select 1',
    { kind: 'utility', cursor: { name: 'c', hold: true, scroll: true, binary: true } },
  ],
  [
    'fetch 10 from c',
    {
      kind: 'utility',
      command: 'fetch',
      cursor: { name: 'c', fetch: { direction: 'forward', count: 10 } },
    },
  ],
  [
    'fetch all in c',
    { kind: 'utility', cursor: { fetch: { direction: 'forward', count: 'all' } } },
  ],
  ['fetch prior c', { kind: 'utility', cursor: { fetch: { direction: 'backward', count: 1 } } }],
  ['fetch last c', { kind: 'utility', cursor: { fetch: { direction: 'absolute', count: -1 } } }],
  [
    'fetch relative 0 c',
    { kind: 'utility', cursor: { fetch: { direction: 'relative', count: 0 } } },
  ],
  [
    'move next in c',
    {
      kind: 'utility',
      command: 'move',
      cursor: { name: 'c', fetch: { direction: 'forward', count: 1 } },
    },
  ],
  ['close c', { kind: 'utility', command: 'close', cursor: { name: 'c', fetch: undefined } }],
  ['do $$ begin perform 1; end $$', { kind: 'utility', command: 'do' }],
  ['call p(1, $1)', { kind: 'utility', command: 'call', paramCount: 1 }],
  ['checkpoint', { kind: 'utility', command: 'check_point' }],
  ["load 'auto_explain'", { kind: 'utility', command: 'load' }],
  [
    'merge into t using u on t.id = u.id when matched then update set a = u.a',
    {
      kind: 'utility',
      command: 'merge',
      tables: [
        { name: 't', role: 'target' },
        { name: 'u', role: 'read' },
      ],
    },
  ],
];

for (const [sql, expected] of cases) {
  test(`analyze: ${sql}`, () => {
    assertSubset(analyze(sql), expected);
  });
}

test('analyses are deeply frozen', () => {
  const a = analyze('select * from t where id = 1');
  assert.ok(Object.isFrozen(a));
  assert.ok(Object.isFrozen(a.tables));
  assert.ok(Object.isFrozen(a.tables[0]));
  assert.throws(() => {
    (a as { sql: string }).sql = 'x';
  }, TypeError);
});

test('analyze refuses zero or several statements; analyzeAll splits', () => {
  assert.throws(() => analyze('select 1; select 2'), { name: 'SqlError', sqlstate: '42601' });
  assert.throws(() => analyze('  ;  '), { name: 'SqlError', sqlstate: '42601' });
  assert.equal(analyzeAll('').length, 0);
});
