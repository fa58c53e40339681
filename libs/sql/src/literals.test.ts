// The literal scanner: which tokens are literals (and their values), and the texts it leaves to
// the full parse rather than guess at.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { normalizeLiterals } from './literals.js';

function slots(sql: string): [string, string][] | undefined {
  return normalizeLiterals(sql)?.slots.map((s) => [s.cls, s.value]);
}

test('numbers: int4, larger integers, decimals and exponents', () => {
  assert.deepEqual(slots('select 1, 2147483647, 2147483648, 007, 1.5, .5, 5., 1e3, 2E-2'), [
    ['i', '1'],
    ['i', '2147483647'],
    ['I', '2147483648'],
    ['i', '007'],
    ['n', '1.5'],
    ['n', '.5'],
    ['n', '5.'],
    ['n', '1e3'],
    ['n', '2E-2'],
  ]);
  assert.deepEqual(slots('select 00000000002147483647, 00000000002147483648'), [
    ['i', '00000000002147483647'],
    ['I', '00000000002147483648'],
  ]);
});

test('strings: standard, doubled quotes, E escapes, dollar quotes', () => {
  assert.deepEqual(slots("select 'a''b', 'c\\d', E'x\\ty\\'z''w', $$q'$$, $t$ $ $t$"), [
    ['s', "a'b"],
    ['s', 'c\\d'],
    ['s', "x\ty'z'w"],
    ['s', "q'"],
    ['s', ' $ '],
  ]);
});

test('identifiers, parameters, comments and quoted names are not literals', () => {
  const n = normalizeLiterals(
    'select "a""1" , t1.c2, x$1, $1 /* 5 /* nested 6 */ 7 */ -- 8\n from t where k = 9',
  );
  assert.deepEqual(
    n?.slots.map((s) => s.value),
    ['9'],
  );
  assert.equal(
    n?.key,
    'select "a""1" , t1.c2, x$1, $1 /* 5 /* nested 6 */ 7 */ -- 8\n from t where k = \0i',
  );
});

test('the key keeps everything but the literals, so equal keys mean equal token streams', () => {
  const a = normalizeLiterals("select * from t where id = 5 and name = 'x' limit 10");
  const b = normalizeLiterals("select * from t where id = 77 and name = 'it''s' limit 3");
  assert.ok(a !== undefined && b !== undefined);
  assert.equal(a.key, b.key);
  const c = normalizeLiterals('select * from t where id = 5.0 and name = 1 limit 10');
  assert.notEqual(a.key, c?.key);
});

test('prefixed strings other than E keep their text in the key', () => {
  const n = normalizeLiterals("select B'101', X'1f', N'abc', e'x'");
  assert.deepEqual(
    n?.slots.map((s) => s.value),
    ['x'],
  );
  assert.ok(n?.key.includes("B'101', X'1f', N'abc'"));
});

test('forms left to the parser', () => {
  for (const sql of [
    "select 'a'\n'b'", // continuation
    "select 'a' -- c\n 'b'",
    "select E'\\101'", // octal escape
    "select E'\\x41'",
    "select E'\\u0041'",
    "select U&'d\\0061t'",
    'select 0x1f',
    'select 1_000',
    'select 12abc',
    'select 1e',
    'select 1..2',
    'select 1.2.3',
    "select 'unterminated",
    'select $$unterminated',
    'select /* unterminated',
    'select "unterminated',
    'select $1abc',
    'select 5$',
  ])
    assert.equal(normalizeLiterals(sql), undefined, sql);
});

test('a dollar sign inside an identifier does not start a dollar quote', () => {
  assert.deepEqual(slots('select a$b$ from t where x = 4'), [['i', '4']]);
});
