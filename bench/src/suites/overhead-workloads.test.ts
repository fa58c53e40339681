// The overhead suite's workloads: both protocols of -S, --workloads picking among them, and the
// targets that run only some of them (PgBouncer in transaction mode: -M simple only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skipLines } from '../report/markdown.js';
import {
  overheadWorkloads,
  preparedCounterparts,
  reasonToSitOut,
  sitOut,
  withSitOuts,
} from './overhead-workloads.js';

test('the workloads cover -S in both protocols; the prepared ones keep their names', () => {
  assert.deepEqual(
    overheadWorkloads().map((w) => [w.group, w.protocol]),
    [
      ['select, 16 clients', 'prepared'],
      ['select, 64 clients', 'prepared'],
      ['select -M simple, 16 clients', 'simple'],
      ['select -M simple, 64 clients', 'simple'],
      ['write, 16 clients', 'prepared'],
      ['tpcb-branch, 16 clients', 'prepared'],
    ],
  );
});

test('--workloads keeps only the named workloads and names the ones there are', () => {
  // select and select-simple at 64 clients: the router against pgbouncer-txn, and its CPU per
  // simple statement against its CPU per prepared one, in one run.
  assert.deepEqual(
    overheadWorkloads([64], ['select', 'select-simple']).map((w) => [w.group, w.protocol]),
    [
      ['select, 64 clients', 'prepared'],
      ['select -M simple, 64 clients', 'simple'],
    ],
  );
  assert.deepEqual(
    overheadWorkloads(undefined, ['select-simple']).map((w) => w.group),
    ['select -M simple, 16 clients', 'select -M simple, 64 clients'],
  );
  assert.deepEqual(
    overheadWorkloads([16], ['select', 'select-simple']).map((w) => w.group),
    ['select, 16 clients', 'select -M simple, 16 clients'],
  );
  assert.throws(
    () => overheadWorkloads(undefined, ['tpcb']),
    /no workload tpcb \(there are select, select-simple, write, tpcb-branch\)/,
  );
});

test('pgbouncer-txn sits out every workload but the -M simple ones; the others run them all', () => {
  const all = overheadWorkloads();
  const out = sitOut('pgbouncer-txn', all);
  assert.deepEqual(out?.groups, [
    'select, 16 clients',
    'select, 64 clients',
    'write, 16 clients',
    'tpcb-branch, 16 clients',
  ]);
  assert.match(out!.reason, /^pool_mode = transaction: .*no prepared statements/);
  assert.equal(reasonToSitOut('pgbouncer-txn', { protocol: 'simple' }), undefined);
  for (const target of ['direct', 'router', 'router-base', 'pgbouncer', 'passthrough'])
    assert.equal(sitOut(target, all), undefined, target);
});

test('a target sitting out some workloads says which in one line; one with none to run is skipped', () => {
  const infos = [
    { name: 'router', detail: 'dist/main.js' },
    { name: 'pgbouncer-txn', detail: 'pool_mode=transaction' },
  ];
  const some = withSitOuts(infos, [], overheadWorkloads([64], ['select', 'select-simple']));
  assert.deepEqual(skipLines(some), [
    "**pgbouncer-txn** in select, 64 clients: pool_mode = transaction: Debian's PgBouncer 1.18 keeps no prepared statements in that mode, so it runs only -M simple workloads",
  ]);
  const none = withSitOuts(
    infos.slice(0, 1),
    ['pgbouncer-txn'],
    overheadWorkloads(undefined, ['write']),
  );
  assert.deepEqual(
    none.map((t) => [t.name, t.skipped]),
    [
      ['router', undefined],
      [
        'pgbouncer-txn',
        "pool_mode = transaction: Debian's PgBouncer 1.18 keeps no prepared statements in that mode, so it runs only -M simple workloads, and this run has none",
      ],
    ],
  );
  // A target that could not start keeps its own reason, not the sit-out.
  const failed = withSitOuts(
    [{ name: 'pgbouncer-txn', skipped: 'pgbouncer is not installed' }],
    [],
    overheadWorkloads(),
  );
  assert.deepEqual(skipLines(failed), ['**pgbouncer-txn**: pgbouncer is not installed']);
});

test('a -M simple workload is paired with the prepared one of the same kind and clients, when it ran', () => {
  assert.deepEqual(
    [...preparedCounterparts(overheadWorkloads())],
    [
      ['select -M simple, 16 clients', 'select, 16 clients'],
      ['select -M simple, 64 clients', 'select, 64 clients'],
    ],
  );
  assert.deepEqual(
    [...preparedCounterparts(overheadWorkloads([64], ['select', 'select-simple']))],
    [['select -M simple, 64 clients', 'select, 64 clients']],
  );
  // Without the prepared select in the run there is nothing to compare with.
  assert.equal(preparedCounterparts(overheadWorkloads(undefined, ['select-simple'])).size, 0);
});
