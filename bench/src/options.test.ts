import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseOptions, UsageError, wants } from './options.js';

test("a suite's defaults apply when the flags are absent, and give way to the flags and to --quick", () => {
  const steady = { rounds: 1, durationS: 600, warmupS: 60 };
  const shared = parseOptions([], 2);
  assert.deepEqual([shared.rounds, shared.durationS, shared.warmupS], [3, 10, 5]);
  const own = parseOptions([], 2, steady);
  assert.deepEqual([own.rounds, own.durationS, own.warmupS], [1, 600, 60]);
  const given = parseOptions(['--duration', '60', '--warmup', '0'], 2, steady);
  assert.deepEqual([given.rounds, given.durationS, given.warmupS], [1, 60, 0]);
  const quick = parseOptions(['--quick'], 2, steady);
  assert.deepEqual([quick.rounds, quick.durationS, quick.warmupS], [1, 2, 0]);
});

test('--router-baseline takes a checkout with a built router, and refuses one without', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  try {
    assert.throws(
      () => parseOptions(['--router-baseline', dir], 2),
      (e) =>
        e instanceof UsageError && /dist[/]main\.js does not exist; run npm ci/.test(e.message),
    );
    assert.throws(() => parseOptions(['--router-baseline'], 2), UsageError);
    mkdirSync(join(dir, 'apps', 'router', 'dist'), { recursive: true });
    writeFileSync(join(dir, 'apps', 'router', 'dist', 'main.js'), '');
    const o = parseOptions(['--router-baseline', relative(process.cwd(), dir)], 2);
    assert.equal(o.routerBaseline, dir);
    assert.equal(parseOptions([], 2).routerBaseline, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--targets pgbouncer means session mode only; pgbouncer-txn is named on its own', () => {
  const session = parseOptions(['--targets', 'router,pgbouncer'], 2);
  assert.deepEqual([wants(session, 'pgbouncer'), wants(session, 'pgbouncer-txn')], [true, false]);
  const txn = parseOptions(['--targets', 'router,pgbouncer-txn'], 2);
  assert.deepEqual([wants(txn, 'pgbouncer'), wants(txn, 'pgbouncer-txn')], [false, true]);
  assert.equal(wants(parseOptions([], 2), 'pgbouncer-txn'), true);
});
