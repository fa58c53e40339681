#!/usr/bin/env node
// `npm test`: every project's tests through Nx, one project at a time (they start real Postgres
// servers and this machine has two cores), then one summary line over all of them.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const resultsDir = join(root, '.nx', 'test-results');
rmSync(resultsDir, { recursive: true, force: true });
const env = { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' };
const nx = join(root, 'node_modules', '.bin', 'nx');
const r = spawnSync(
  nx,
  ['run-many', '-t', 'test', '--parallel=1', '--output-style=stream', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env,
    cwd: root,
  },
);
const total = { passed: 0, failed: 0, skipped: 0 };
let files = [];
try {
  files = readdirSync(resultsDir);
} catch {
  /* no project ran tests */
}
for (const f of files) {
  const c = JSON.parse(readFileSync(join(resultsDir, f), 'utf8').trim() || '{}');
  total.passed += c.passed ?? 0;
  total.failed += c.failed ?? 0;
  total.skipped += c.skipped ?? 0;
}
const status = r.status ?? 1;
if (status !== 0 && total.failed === 0) total.failed = 1; // a project failed outside any test
console.log(`\ntests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(status);
