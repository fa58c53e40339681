// mergeReturning: RETURNING rows of a split INSERT back in VALUES order, or an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeReturning } from './returning.js';
import { MergeError } from './errors.js';

const row = (s: string) => [Buffer.from(s)];

test('rows come back in the order of the VALUES list', () => {
  const out = mergeReturning([
    { rows: [1, 3], returned: [row('b'), row('d')] },
    { rows: [0, 2, 4], returned: [row('a'), row('c'), row('e')] },
  ]);
  assert.deepEqual(
    out.map((r) => r[0]?.toString()),
    ['a', 'b', 'c', 'd', 'e'],
  );
});

test('a part that returned fewer rows than it inserted is refused', () => {
  assert.throws(
    () => mergeReturning([{ rows: [0, 1], returned: [row('a')] }]),
    (e: unknown) => e instanceof MergeError && e.sqlstate === '0A000',
  );
  assert.throws(
    () => mergeReturning([{ rows: [0, 0], returned: [row('a'), row('b')] }]),
    MergeError,
  );
  assert.throws(
    () => mergeReturning([{ rows: [0, 5], returned: [row('a'), row('b')] }]),
    MergeError,
  );
});
