import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addDecimal,
  compareDecimal,
  decimalKey,
  divideDecimal,
  formatDecimal,
  fromBigInt,
  parseDecimal,
  selectDivScale,
} from './decimal.js';
import type { Decimal } from './decimal.js';

const d = parseDecimal;
const div = (a: string, n: bigint) =>
  formatDecimal(divideDecimal(d(a), fromBigInt(n) as Decimal & { kind: 'finite' }));

test('parse and format keep the display scale', () => {
  for (const t of [
    '0',
    '1',
    '-1',
    '1.500',
    '-0.001',
    '123456789012345678901234567890.12',
    'NaN',
    'Infinity',
    '-Infinity',
  ])
    assert.equal(formatDecimal(d(t)), t);
  assert.equal(formatDecimal(d('.5')), '0.5');
  assert.throws(() => d('abc'), /invalid input syntax for type numeric/);
});

test('addition keeps the largest scale and follows special-value rules', () => {
  assert.equal(formatDecimal(addDecimal(d('1.5'), d('2.25'))), '3.75');
  assert.equal(formatDecimal(addDecimal(d('1.50'), d('-1.5'))), '0.00');
  assert.equal(formatDecimal(addDecimal(d('Infinity'), d('-Infinity'))), 'NaN');
  assert.equal(formatDecimal(addDecimal(d('Infinity'), d('5'))), 'Infinity');
  assert.equal(formatDecimal(addDecimal(d('NaN'), d('Infinity'))), 'NaN');
});

test('ordering: -Infinity < finite < Infinity < NaN, scale-insensitive', () => {
  const sorted = ['NaN', '1', '-Infinity', '1.000', '-2.5', 'Infinity', '0.1']
    .map(d)
    .sort(compareDecimal)
    .map(formatDecimal);
  assert.deepEqual(sorted, ['-Infinity', '-2.5', '0.1', '1', '1.000', 'Infinity', 'NaN']);
  assert.equal(decimalKey(d('1.500')), decimalKey(d('1.5')));
  assert.notEqual(decimalKey(d('15')), decimalKey(d('1.5')));
});

test('select_div_scale as numeric.c computes it', () => {
  // 3 / 2: first NBASE digits 3 > 2, so qweight stays 0 and the scale is 16; 1 / 3 gets 20.
  assert.equal(selectDivScale(3n, 0, 2n, 0), 16);
  assert.equal(selectDivScale(1n, 0, 3n, 0), 20);
  assert.equal(selectDivScale(100000n, 0, 3n, 0), 12);
  assert.equal(selectDivScale(12345n, 3, 7n, 0), 16);
});

test('division rounds half away from zero at the selected scale', () => {
  assert.equal(div('3', 2n), '1.5000000000000000');
  assert.equal(div('1', 3n), '0.33333333333333333333');
  assert.equal(div('2', 3n), '0.66666666666666666667');
  assert.equal(div('-2', 3n), '-0.66666666666666666667');
  assert.equal(div('10', 4n), '2.5000000000000000');
  assert.equal(div('0', 4n), '0.00000000000000000000');
  assert.equal(div('12.345', 7n), '1.7635714285714286');
  assert.equal(div('NaN', 7n), 'NaN');
  assert.equal(div('-Infinity', 7n), '-Infinity');
});
