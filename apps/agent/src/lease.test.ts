import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lease } from './lease.js';

test('a lease runs from when the report it answers was sent, never from when it arrived', () => {
  let now = 1000;
  const lease = new Lease(() => now);
  assert.equal(lease.armed, false);
  assert.equal(lease.remainingMs(), undefined);
  lease.sent(1n);
  now = 1800; // the grant comes back 800 ms later
  assert.equal(lease.granted(1n, 5000), true);
  assert.equal(lease.armed, true);
  assert.equal(lease.remainingMs(), 4200);
  // An older grant arriving late never shortens it; an unknown report is ignored.
  lease.sent(2n);
  now = 2000;
  assert.equal(lease.granted(1n, 1000), true);
  assert.equal(lease.remainingMs(), 4000);
  assert.equal(lease.granted(99n, 5000), false);
  now = 7000;
  assert.ok((lease.remainingMs() ?? 0) < 0);
  lease.clear();
  assert.equal(lease.armed, false);
});
