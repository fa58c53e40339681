import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProcess } from './processes.js';

test("runProcess returns all of a child's output, also what reaches the pipe after it exited", async () => {
  // The child exits first; what it left to write (here a subshell's, a moment later) must still
  // be read: a pgbench summary was once lost that way, the result reported as unreadable.
  const script = '(sleep 0.3; echo summary line; echo bye >&2) & echo first; exit 3';
  const r = await runProcess('/bin/sh', ['-c', script], { timeoutMs: 30_000 });
  assert.equal(r.code, 3);
  assert.equal(r.stdout, 'first\nsummary line\n');
  assert.equal(r.stderr, 'bye\n');
});
