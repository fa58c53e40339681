// The overhead suite's workloads: both protocols of -S, and --workloads picking among them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { overheadWorkloads } from './overhead-workloads.js';

test('the workloads cover -S in both protocols; the prepared ones keep their names', () => {
  assert.deepEqual(
    overheadWorkloads().map((w) => [w.group, w.protocol]),
    [
      ['select, 16 clients', 'prepared'],
      ['select, 64 clients', 'prepared'],
      ['select -M simple, 16 clients', 'simple'],
      ['write, 16 clients', 'prepared'],
      ['tpcb-branch, 16 clients', 'prepared'],
    ],
  );
});

test('--workloads keeps only the named workloads and names the ones there are', () => {
  assert.deepEqual(
    overheadWorkloads([16], ['select', 'select-simple']).map((w) => w.group),
    ['select, 16 clients', 'select -M simple, 16 clients'],
  );
  assert.throws(
    () => overheadWorkloads(undefined, ['tpcb']),
    /no workload tpcb \(there are select, select-simple, write, tpcb-branch\)/,
  );
});
