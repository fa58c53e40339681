// The soak's stale read stays fixed: a cross-node COMMIT whose COMMIT PREPARED failed on a node
// that was restarting is answered only once that node committed it, so a read after the answer
// sees the write and nothing stays prepared (ack-before-commit-prepared.ts has the steps).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reproduce } from './ack-before-commit-prepared.js';

test(
  'COMMIT across nodes is answered only after every node ran COMMIT PREPARED',
  { timeout: 240_000 },
  async (t) => {
    const r = await reproduce((s) => t.diagnostic(s));
    assert.equal(r.answer, 'COMMIT answered COMMIT');
    assert.notEqual(r.seen, '[]', 'a read after the acknowledgement sees the write');
    assert.ok(r.seen !== undefined && r.seen.includes('2'), `read: ${r.seen}`);
    assert.deepEqual(r.prepared, []);
    assert.equal(r.reproduced, false);
  },
);
