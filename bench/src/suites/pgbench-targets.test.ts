// The pool sizes the one-node targets start with: PgBouncer in transaction mode gets as many
// server connections as the router has backends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseOptions } from '../options.js';
import { pgbouncerTxnPoolSize, routerPoolSizeOf } from './pgbench-targets.js';

test("pgbouncer-txn's pool is the router's, in every router process", () => {
  const suite = { poolSize: 64, routerPoolSize: 20 };
  const plain = { ...suite, opts: parseOptions([], 2) };
  assert.deepEqual([routerPoolSizeOf(plain), pgbouncerTxnPoolSize(plain)], [20, 20]);
  const sized = { ...suite, opts: parseOptions(['--router-pool-size', '8'], 2) };
  assert.deepEqual([routerPoolSizeOf(sized), pgbouncerTxnPoolSize(sized)], [8, 8]);
  const workers = { ...suite, opts: parseOptions(['--router-workers', '2'], 2) };
  assert.deepEqual([routerPoolSizeOf(workers), pgbouncerTxnPoolSize(workers)], [20, 40]);
  // A suite without a router pool of its own gives the router its poolSize, and so pgbouncer-txn.
  const own = { poolSize: 16, opts: parseOptions([], 2) };
  assert.equal(pgbouncerTxnPoolSize(own), 16);
});
