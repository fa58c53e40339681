// Job views without a cluster: states by name, the progress of a running move (rows of total,
// rate, ETA), the terminal progress line, the plan as text.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { create, JobSchema, JobState } from '@tessera/proto';
import { jobStateName, jobTarget, progressLine, progressOf } from './job-view.js';
import { planText } from './moves.js';

const job = create(JobSchema, {
  id: 7n,
  kind: 'move',
  state: JobState.RUNNING,
  phase: 'copying',
  specJson: '{"keyspace":"tenants","lo":"-9223372036854775808","to":"data3"}',
  steps: [
    { index: 0, name: 'plan', state: JobState.DONE, progressJson: '{}' },
    {
      index: 1,
      name: 'copy',
      state: JobState.RUNNING,
      progressJson: '{"rows":2500,"totalRows":10000}',
    },
    { index: 2, name: 'sync', state: JobState.PENDING, progressJson: '{}' },
  ],
});

test('states and targets read as words', () => {
  assert.equal(jobStateName(JobState.VERIFY_FAILED), 'verify_failed');
  assert.equal(jobStateName(JobState.CANCELLING), 'cancelling');
  assert.equal(jobTarget(job), 'tenants:-9223372036854775808 -> data3');
});

test('progress: rows of total, a rate from the previous look, an ETA, and a bar', () => {
  const p = progressOf(job, { rows: 1500, atMs: 1_000 }, 2_000);
  assert.deepEqual([p.rows, p.totalRows, p.rowsPerSec, p.etaSeconds], [2500, 10000, 1000, 8]);
  assert.equal(
    progressLine(p),
    '[######------------------]  job 7 move  copying  2,500/10,000 rows  1,000 rows/s  ETA 8s',
  );
});

test('a plan prints its checks, warnings and numbered steps', () => {
  const text = planText({
    keyspace: 'tenants',
    lo: '1',
    hi: '9',
    source: 'data1',
    target: 'data3',
    rows: 1234,
    bytes: 2048,
    checks: [
      { name: 'wal_level', ok: true, sentence: 'node data1 runs with wal_level=logical' },
      { name: 'disk', ok: false, sentence: 'node data3 has 1 GB free' },
    ],
    refusals: ['node data3 has 1 GB free'],
    warnings: ['w'],
    steps: ['plan: a', 'prepare: b'],
    estimate: { copySeconds: 1, verifySeconds: 0.1, deleteSeconds: 0.2, totalSeconds: 2.3 },
  });
  assert.match(text, /^move tenants:\[1, 9\] from data1 to data3$/m);
  assert.match(text, /^1,234 rows, 2\.0 kB to copy; about 2\.3 s/m);
  assert.match(text, /^ {2}FAIL {2}disk +node data3 has 1 GB free$/m);
  assert.match(text, /^ {2}2\. prepare: b$/m);
});
