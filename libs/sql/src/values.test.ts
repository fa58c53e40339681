// Array literal parsing for `= ANY('{...}')`, following array_in's rules.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseArrayLiteral } from './index.js';

const cases: Array<[string, (string | null)[] | undefined]> = [
  ['{}', []],
  ['{1,2,3}', ['1', '2', '3']],
  [' { 1 , 2 } ', ['1', '2']],
  ['{"a b","c,d",NULL,null,"NULL"}', ['a b', 'c,d', null, null, 'NULL']],
  ['{"a\\"b",c\\,d}', ['a"b', 'c,d']],
  ['{{1,2},{3,4}}', undefined],
  ['[1:2]={1,2}', undefined],
  ['{1,,2}', undefined],
  ['1,2', undefined],
  ['{"unterminated}', undefined],
];
for (const [input, expected] of cases) {
  test(`parseArrayLiteral(${JSON.stringify(input)})`, () =>
    assert.deepEqual(parseArrayLiteral(input), expected));
}
