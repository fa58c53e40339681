// Test helper: asserts that `actual` contains `expected` (objects compared by the keys of
// `expected`, arrays element-wise with equal length), with a readable path on failure.
import * as assert from 'node:assert/strict';

export function assertSubset(actual: unknown, expected: unknown, path = '$'): void {
  if (expected === null || typeof expected !== 'object') {
    assert.deepEqual(
      actual,
      expected,
      `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
    );
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(
      actual.length,
      expected.length,
      `${path}: length ${actual.length} != ${expected.length}: ${JSON.stringify(actual)}`,
    );
    expected.forEach((e, i) => assertSubset(actual[i], e, `${path}[${i}]`));
    return;
  }
  assert.ok(
    actual !== null && typeof actual === 'object',
    `${path}: expected an object, got ${JSON.stringify(actual)}`,
  );
  for (const [k, v] of Object.entries(expected)) {
    assertSubset((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  }
}
