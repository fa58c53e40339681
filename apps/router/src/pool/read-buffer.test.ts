// What a backend socket read stays as it was however many reads come after it (read-buffer.ts):
// the views the router forwards to clients without copying depend on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readInto } from './read-buffer.js';

test('bytes read stay intact through later reads, across slabs', () => {
  const kept: Buffer[] = [];
  const expected: Buffer[] = [];
  const a = readInto((chunk) => kept.push(chunk));
  const b = readInto((chunk) => kept.push(chunk));
  const shared = a.buffer as Buffer;
  assert.equal(b.buffer, shared, 'one read buffer for every backend');
  // Enough reads of varied sizes (up to the largest, 64 KiB) to fill several slabs.
  const sizes = [5, 300, 65_536, 1, 40_000, 65_000, 12, 65_536, 9_000];
  for (let round = 0; round < 12; round++) {
    for (const [i, n] of sizes.entries()) {
      const fill = (round * 31 + i * 7) & 0xff;
      shared.fill(fill, 0, n);
      expected.push(Buffer.alloc(n, fill));
      const ret = (i % 2 === 0 ? a : b).callback(n, shared);
      assert.equal(ret, true, 'the socket keeps reading');
    }
  }
  assert.equal(kept.length, expected.length);
  for (const [i, chunk] of kept.entries()) assert.ok(chunk.equals(expected[i]!), `read ${i}`);
});
