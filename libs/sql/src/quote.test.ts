// quoteIdent / quoteLiteral match Postgres's quote_ident / quote_literal / quote_nullable.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { quoteIdent, quoteLiteral, quoteQualified } from './index.js';

const idents: Array<[string, string]> = [
  ['users', 'users'],
  ['_x1$', '_x1$'],
  ['Users', '"Users"'],
  ['my table', '"my table"'],
  ['a"b', '"a""b"'],
  ['1abc', '"1abc"'],
  ['select', '"select"'],
  ['user', '"user"'],
  ['int', '"int"'],
  ['between', '"between"'],
  ['name', 'name'],
  ['begin', 'begin'],
  ['', '""'],
  ['ß', '"ß"'],
];
for (const [input, expected] of idents) {
  test(`quoteIdent(${JSON.stringify(input)})`, () => assert.equal(quoteIdent(input), expected));
}

const literals: Array<[string | null, string]> = [
  ['abc', "'abc'"],
  ["it's", "'it''s'"],
  ['a\\b', "E'a\\\\b'"],
  ["a\\'b", "E'a\\\\''b'"],
  ['', "''"],
  [null, 'NULL'],
  ['ünï', "'ünï'"],
];
for (const [input, expected] of literals) {
  test(`quoteLiteral(${JSON.stringify(input)})`, () => assert.equal(quoteLiteral(input), expected));
}

test('quoteQualified', () => {
  assert.equal(quoteQualified(undefined, 't'), 't');
  assert.equal(quoteQualified('Sch', 'order'), '"Sch"."order"');
});
