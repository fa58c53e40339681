// Literal SQL at prepared speed, checked as a property: for a corpus of statement shapes filled
// with random literals, the analysis through the shape cache (no parse after the second text of a
// shape) is exactly the full parse's analysis, field for field; routing is a pure function of the
// analysis, so it routes alike. Shapes whose literals the analysis interprets fall back to parsing.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { initSqlParser, analyzeAll, AnalysisCache } from './index.js';
import { normalizeLiterals } from './literals.js';
import { buildTemplate } from './shapes.js';

await initSqlParser();

/** mulberry32: the same seed gives the same corpus. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const FILL: Record<string, (r: R) => string> = {
  // int4 integers, with leading zeros now and then
  i: (r) => pick(r, ['0', '7', '42', '2147483647', '00012', String(Math.floor(r() * 1e6))]),
  // beyond int4
  I: (r) => pick(r, ['2147483648', '9223372036854775807', '99999999999999999999', '0004294967296']),
  n: (r) => pick(r, ['1.5', '0.0', '.25', '3.', '1e3', '2.5E-2', String(r() * 1000)]),
  s: (r) =>
    pick(r, [
      "'abc'",
      "''",
      "'it''s'",
      "'back\\slash'",
      "E'tab\\there'",
      "E'quote\\'s'",
      '$$dollar $ quoted$$',
      '$x$tagged$x$',
      "'ünïcödé ✓'",
      "'{1,2}'",
      `'${Math.floor(r() * 1000)}'`,
    ]),
  u: (r) =>
    `'${Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(r() * 16)])
      .join('')
      .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')}'`,
};

const SHAPES = [
  'select abalance from pgbench_accounts where aid = {i}',
  'SELECT abalance FROM pgbench_accounts WHERE aid = {I};',
  'select * from t where id = -{i}',
  'select * from t where id = - {n} and x > {i}',
  'select * from t where id in ({i}, {i}, -{i})',
  'select * from t where id = any(array[{i}, {i}, {I}])',
  'select * from t where id = {s}',
  'select * from t where id = {u}::uuid and name = {s}',
  "select * from t where created > date {s} - interval '1 day'",
  'select * from t where id = {i} limit {i} offset {i}',
  'select * from t where id = {i} fetch first {i} rows only',
  'select a.x, b.y from a join b on a.id = b.id and b.id = {i} where a.id = {i}',
  'select count(*), sum(x) from t where grp = {s} group by 1 order by 1 limit {i}',
  '/* leading {i} comment */ select * from t -- trailing\n where id = {i}',
  'select * from t where id = {i}; select * from u where k = {s}',
  'insert into t (id, name, amount) values ({i}, {s}, {n})',
  'insert into t (id, name) values ({i}, {s}), ({I}, {s}), (-{i}, {s}) returning id',
  'insert into t (id, v) values ({i}, $1), ({i}, $2)',
  'insert into t (id, v) values ({i}, {n}) on conflict (id) do update set v = {n}',
  'insert into t values ({i}, {s})',
  'insert into t (id) select id from u where id = {i}',
  'update t set v = {n}, name = {s} where id = {i}',
  'update t set v = v + {i} where id in ({i}, {i})',
  'delete from t where id = {I} and v < {n}',
  'delete from t where id = any({s}::bigint[])',
  'select * from t where id = {i} and v = {s}::varchar(20)',
  'select * from t where id = {i} and v = {s}::numeric(10, 2)',
  "select * from t where v like {s} escape '!' and id = {i}",
  'select {s} as label, {n} * 2 from t where id = {i}',
  'select * from t where (id, v) = ({i}, {s})',
  'select * from t where id = {i} order by 1 desc',
];

function fill(shape: string, r: R): string {
  return shape.replace(/\{(\w)\}/g, (_, c: string) => (FILL[c] as (r: R) => string)(r));
}

test('shape cache analyses equal the full parse for every shape and literal', () => {
  const r = prng(15);
  const cache = new AnalysisCache(10_000, { normalizeLiterals: true });
  let checked = 0;
  for (const shape of SHAPES) {
    for (let k = 0; k < 40; k++) {
      const sql = fill(shape, r);
      const full = analyzeAll(sql);
      const cached = cache.get(sql);
      assert.equal(JSON.stringify(cached), JSON.stringify(full), sql);
      assert.ok(Object.isFrozen(cached), sql);
      checked++;
    }
  }
  assert.equal(checked, SHAPES.length * 40);
  // Most shapes are answered from templates; the exact share is reported, not timed.
  assert.ok(cache.shapeHits > checked / 2, `shape hits ${cache.shapeHits} of ${checked}`);
});

test('the pgbench -S shape is parsed twice, then never again', () => {
  const cache = new AnalysisCache(100, { normalizeLiterals: true });
  for (let aid = 1; aid <= 500; aid++)
    cache.get(`SELECT abalance FROM pgbench_accounts WHERE aid = ${aid};`);
  assert.equal(cache.misses, 1);
  assert.equal(cache.shapeHits, 499);
  const a = cache.get('SELECT abalance FROM pgbench_accounts WHERE aid = 31337;')[0];
  assert.ok(a?.kind === 'select');
  assert.deepEqual(a.where.pins[0]?.values, [
    { kind: 'const', text: '31337', literal: 'integer', typeName: undefined },
  ]);
  assert.equal(a.sql, 'SELECT abalance FROM pgbench_accounts WHERE aid = 31337');
});

test('shapes whose literals change the analysis beyond a value are parsed every time', () => {
  for (const sql of [
    // The array literal's elements are pins: the text is interpreted, not copied.
    "select * from t where id = any('{1,2}')",
    // A typmod is part of the type name.
    "select * from t where v = 'x'::varchar(20)",
    // Not a statement kind the templates cover.
    "set search_path = 'x'",
  ]) {
    const norm = normalizeLiterals(sql);
    assert.ok(norm !== undefined, sql);
    assert.equal(buildTemplate(sql, norm, analyzeAll(sql)), undefined, sql);
    const cache = new AnalysisCache(10, { normalizeLiterals: true });
    for (const v of ['1', '2', '3']) {
      const text = sql.replace(/\d/, v);
      assert.equal(JSON.stringify(cache.get(text)), JSON.stringify(analyzeAll(text)));
    }
    assert.equal(cache.shapeHits, 0, sql);
  }
});

test('without the option, the cache is keyed by exact text only', () => {
  const cache = new AnalysisCache(10);
  cache.get('select * from t where id = 1');
  cache.get('select * from t where id = 2');
  cache.get('select * from t where id = 3');
  assert.equal(cache.misses, 3);
  assert.equal(cache.shapeHits, 0);
});

test('a syntax error through the shape path is thrown and not cached', () => {
  const cache = new AnalysisCache(10, { normalizeLiterals: true });
  assert.throws(() => cache.get('selec 1'));
  assert.throws(() => cache.get('selec 2'));
  assert.equal(cache.size, 0);
});
