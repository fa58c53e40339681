// Keeps the suites working: each runs through the real command (`bench/bin/bench.mjs <suite>
// --quick`) for a few seconds, into a temp directory, all at once to stay fast. The numbers mean
// nothing here; only that results are produced and written. A router that cannot start (or
// refuses a query) is a skip the suites record, so only the plain-Postgres side must measure.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SuiteResult } from './report/model.js';

const BENCH = fileURLToPath(new URL('../bin/bench.mjs', import.meta.url));
const SUITES = ['overhead', 'scaleout', 'idle', 'scatter', '2pc', 'steady'] as const;
const out = mkdtempSync(join(tmpdir(), 'tessera-bench-smoke-'));
const runs = new Map<string, { code: number; output: string }>();

function runSuite(suite: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BENCH, suite, '--quick', '--out', join(out, suite)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    // Six suites start their servers at once on two cores: generous, but a hung suite still ends.
    const timer = setTimeout(() => child.kill('SIGTERM'), 300_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    });
  });
}

function result(suite: string): SuiteResult {
  const dir = join(out, suite);
  const json = readdirSync(dir).find((f) => f.endsWith(`-${suite}.json`));
  assert.ok(json, `no JSON result for ${suite}: ${runs.get(suite)?.output ?? ''}`);
  return JSON.parse(readFileSync(join(dir, json), 'utf8')) as SuiteResult;
}

function assertFilesWritten(suite: string): void {
  const r = result(suite);
  for (const ext of ['md', 'svg']) {
    const f = join(out, suite, `${r.date}-${suite}.${ext}`);
    assert.ok(existsSync(f), `${f} missing`);
    assert.ok(readFileSync(f, 'utf8').length > 100);
  }
  assert.match(readFileSync(join(out, suite, `${r.date}-${suite}.svg`), 'utf8'), /^<svg /);
}

before(async () => {
  const all = await Promise.all(SUITES.map((s) => runSuite(s)));
  SUITES.forEach((s, i) => runs.set(s, all[i]!));
});

after(() => rmSync(out, { recursive: true, force: true }));

describe('bench --quick', () => {
  for (const suite of ['overhead', 'scaleout'] as const) {
    test(`${suite}: direct has TPS > 0 in every workload, files written`, () => {
      const run = runs.get(suite)!;
      assert.equal(run.code, 0, run.output);
      const r = result(suite);
      const direct = r.summary.filter((s) => s.target === 'direct');
      assert.ok(direct.length >= 3, run.output);
      for (const row of direct)
        assert.ok((row.values['tps'] ?? 0) > 0, `${row.group}: ${run.output}`);
      assert.ok(r.machine.cores > 0 && r.machine.postgres.includes('PostgreSQL'));
      assertFilesWritten(suite);
      // Every target either ran or says why it did not.
      for (const t of r.targets) assert.ok(t.detail !== undefined || t.skipped !== undefined);
    });
  }

  test('idle: the pass-through proxy holds the clients, files written', () => {
    const run = runs.get('idle')!;
    assert.equal(run.code, 0, run.output);
    const r = result('idle');
    const pass = r.summary.find((s) => s.target === 'passthrough');
    assert.ok(pass && (pass.values['rssAfterMB'] ?? 0) > 0, run.output);
    assertFilesWritten('idle');
  });

  test('scatter: single has TPS > 0 for every query, the router ran or says why, files written', () => {
    const run = runs.get('scatter')!;
    assert.equal(run.code, 0, run.output);
    const r = result('scatter');
    const single = r.summary.filter((s) => s.target === 'single');
    assert.ok(single.length >= 5, run.output);
    for (const row of single)
      assert.ok((row.values['tps'] ?? 0) > 0, `${row.group}: ${run.output}`);
    const router = r.targets.find((t) => t.name === 'router');
    assert.ok(router && (router.detail !== undefined || router.skipped !== undefined), run.output);
    // A router that ran has its memory sampled, or a reason for each query it did not run.
    for (const row of r.summary.filter((s) => s.target === 'router'))
      assert.ok(row.okRounds === 0 ? row.errors.length > 0 : (row.values['rssPeakMB'] ?? 0) > 0);
    assertFilesWritten('scatter');
  });

  test('2pc: direct-local has TPS > 0, the money on single is unchanged, files written', () => {
    const run = runs.get('2pc')!;
    assert.equal(run.code, 0, run.output);
    const r = result('2pc');
    const direct = r.summary.find((s) => s.target === 'direct-local');
    assert.ok(direct && (direct.values['tps'] ?? 0) > 0, run.output);
    const single = r.checks?.find((c) => c.name === 'total balance on single');
    assert.ok(single?.ok, run.output);
    for (const t of r.targets) assert.ok(t.detail !== undefined || t.skipped !== undefined);
    assertFilesWritten('2pc');
  });

  test('steady: the pass-through proxy carries the load with its RSS sampled, the router ran or says why, files written', () => {
    const run = runs.get('steady')!;
    assert.equal(run.code, 0, run.output);
    const r = result('steady');
    const pass = r.summary.find((s) => s.target === 'passthrough');
    assert.ok(pass && (pass.values['tps'] ?? 0) > 0, run.output);
    assert.ok(
      (pass.values['rssWarmMB'] ?? 0) > 0 && (pass.values['rssEndMB'] ?? 0) > 0,
      run.output,
    );
    assert.equal(typeof pass.values['rssGrowthPct'], 'number');
    const line = r.timeline?.series.find((s) => s.name === 'passthrough');
    assert.ok(line && line.points.length > 2, run.output);
    const router = r.targets.find((t) => t.name === 'router');
    assert.ok(router && (router.detail !== undefined || router.skipped !== undefined), run.output);
    // A router that ran is judged against the target.
    if (router.skipped === undefined) assert.equal(r.checks?.length, 1, run.output);
    assertFilesWritten('steady');
    assert.match(readFileSync(join(out, 'steady', `${r.date}-steady.svg`), 'utf8'), /<polyline /);
  });
});
