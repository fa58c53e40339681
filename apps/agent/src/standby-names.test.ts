import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStandbyNames } from './standby-names.js';

test('every form of synchronous_standby_names', () => {
  assert.deepEqual(parseStandbyNames(''), { names: [], any: false });
  assert.deepEqual(parseStandbyNames('FIRST 1 (d1_a, D1_B)'), {
    names: ['d1_a', 'd1_b'],
    any: false,
  });
  assert.deepEqual(parseStandbyNames('any 2 (a,"B, c")'), { names: ['a', 'B, c'], any: false });
  assert.deepEqual(parseStandbyNames('2 (a, b)'), { names: ['a', 'b'], any: false });
  assert.deepEqual(parseStandbyNames('a, b'), { names: ['a', 'b'], any: false });
  assert.deepEqual(parseStandbyNames('*'), { names: [], any: true });
});
