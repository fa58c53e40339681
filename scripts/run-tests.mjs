#!/usr/bin/env node
// Runs one project's tests (every src/**/*.test.ts) with Node's test runner on the TypeScript
// sources, and records the pass/fail counts for the root summary (scripts/test-all.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, mkdirSync } from 'node:fs';
import { join, resolve, basename } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const project = process.cwd();

function find(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) find(p, out);
    else if (e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

// A project's tests live under src/; apps/router also keeps the driver matrix's own unit tests
// beside it in drivers/ (the matrix itself runs with `npm run drivers`).
const files = ['src', 'drivers']
  .map((d) => join(project, d))
  .filter((d) => existsSync(d))
  .flatMap((d) => find(d))
  .sort();
if (files.length === 0) {
  console.log(`no tests in ${basename(project)}`);
  process.exit(0);
}
const resultsDir = join(root, '.nx', 'test-results');
mkdirSync(resultsDir, { recursive: true });
const name = project.slice(root.length + 1).replaceAll('/', '-');
// A test file (and each test in it) that runs past FILE_TIMEOUT_MS fails by name and its process
// is killed, instead of holding CI until its own deadline with nothing printed; the longest file
// takes about a minute here. (Not --test-force-exit: under load it ended files before all of
// their tests had run, and they went uncounted.)
const FILE_TIMEOUT_MS = Number(process.env.TESSERA_TEST_FILE_TIMEOUT_MS ?? 15 * 60_000);
const args = [
  '--conditions=development',
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=1',
  `--test-timeout=${FILE_TIMEOUT_MS}`,
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-reporter=${join(root, 'scripts', 'count-reporter.mjs')}`,
  `--test-reporter-destination=${join(resultsDir, name + '.json')}`,
  ...process.argv.slice(2),
  ...files,
];
const r = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: project });
process.exit(r.status ?? 1);
