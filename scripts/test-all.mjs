#!/usr/bin/env node
// `npm test`: builds every project once through Nx, then runs every project's tests
// (scripts/run-tests.mjs), two projects at a time, and prints one summary line over all of
// them. Within a project the test files run one at a time, as before; two projects run at once
// because the tests mostly wait on Postgres servers and processes, which leaves this machine's
// two cores half idle with one at a time (21 minutes, load average about 1; 11 with two). Each
// output line is prefixed with its project.
// Arguments are passed to every project's test runner (e.g. --test-name-pattern=...).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const root = resolve(import.meta.dirname, '..');
const resultsDir = join(root, '.nx', 'test-results');
rmSync(resultsDir, { recursive: true, force: true });
const env = { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' };

const build = spawnSync(
  join(root, 'node_modules', '.bin', 'nx'),
  ['run-many', '-t', 'build', '--output-style=stream-without-prefixes'],
  { stdio: 'inherit', env, cwd: root },
);
if (build.status !== 0) {
  console.log('\ntests: 0 passed, 1 failed, 0 skipped (the build failed)');
  process.exit(build.status ?? 1);
}

/**
 * Every workspace folder whose package.json has a test script; with TESSERA_TEST_PROJECTS
 * (comma-separated folders, e.g. apps/router,libs/sql) only those.
 */
function projects() {
  const only = process.env.TESSERA_TEST_PROJECTS?.split(',').filter(Boolean);
  const dirs = [];
  for (const group of ['apps', 'libs'])
    for (const e of readdirSync(join(root, group), { withFileTypes: true }))
      if (e.isDirectory()) dirs.push(`${group}/${e.name}`);
  dirs.push('bench', 'soak');
  return dirs.filter((d) => {
    if (only && !only.includes(d)) return false;
    const pkg = join(root, d, 'package.json');
    return existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).scripts?.test !== undefined;
  });
}

// The longest first (apps/router about 7 minutes, apps/mover about 4), then the rest: two
// workers take the next project from one list, so they end within a minute of each other.
const LONGEST = ['apps/router', 'apps/mover'];
const all = projects().sort();
const pending = [
  ...LONGEST.filter((p) => all.includes(p)),
  ...all.filter((p) => !LONGEST.includes(p)),
];

/** Live processes other than `leader` in the process group `leader` leads: "pid args" each. */
function groupMembers(leader) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === leader) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // pid (comm) state ppid pgrp ...: comm may hold spaces and ')'; read after the last ')'.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A zombie (Z) has exited already; only its parent's reaping is pending.
      if (Number(pgrp) !== leader || state === 'Z') continue;
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      found.push(`${pid} ${args.slice(0, 160)}`);
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

// Interrupted: every project's process group goes with this script.
const running = new Set();
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    for (const pid of running)
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    process.exit(130);
  });

/**
 * Runs one project's tests; resolves with its exit status. The project runs in its own process
 * group: whatever a test started and left running (a router, a coordinator) is named and killed
 * once the project's runner exits, so it can neither hold the output pipes open (which would
 * keep this script waiting with nothing printed) nor stay behind on the machine.
 */
function runProject(project) {
  return new Promise((done) => {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [join(root, 'scripts', 'run-tests.mjs'), ...process.argv.slice(2)],
      {
        cwd: join(root, project),
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    running.add(child.pid);
    for (const stream of [child.stdout, child.stderr])
      createInterface({ input: stream }).on('line', (line) => console.log(`${project}: ${line}`));
    let status = 1;
    child.on('exit', (code) => {
      status = code ?? 1;
      running.delete(child.pid);
      const left = groupMembers(child.pid);
      if (left.length > 0) {
        console.log(`${project}: left running after its tests, killed now:`);
        for (const p of left) console.log(`${project}:   ${p}`);
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone meanwhile */
        }
      }
      // The pipes close once nothing holds them; a process outside the group that inherited
      // them (it started its own session) is not waited for.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 10_000).unref();
    });
    child.on('close', () => {
      const s = Math.round((Date.now() - started) / 1000);
      console.log(
        `${project}: tests ${status === 0 ? 'passed' : `failed (exit ${status})`} in ${s} s`,
      );
      done(status);
    });
  });
}

async function worker() {
  let status = 0;
  for (let p = pending.shift(); p !== undefined; p = pending.shift())
    status = (await runProject(p)) || status;
  return status;
}

/** The last complete line of a count reporter's file (count-reporter.mjs), or no counts. */
function lastCounts(text) {
  for (const line of text.trim().split('\n').reverse())
    try {
      return JSON.parse(line);
    } catch {
      /* a line cut short by the exit */
    }
  return {};
}

const statuses = await Promise.all([worker(), worker()]);
const total = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
let files = [];
try {
  files = readdirSync(resultsDir);
} catch {
  /* no project ran tests */
}
for (const f of files) {
  const c = lastCounts(readFileSync(join(resultsDir, f), 'utf8'));
  total.passed += c.passed ?? 0;
  total.failed += c.failed ?? 0;
  total.skipped += c.skipped ?? 0;
  failures.push(...(c.failures ?? []));
}
const status = statuses.find((s) => s !== 0) ?? 0;
if (status !== 0 && total.failed === 0) total.failed = 1; // a project failed outside any test
// The failures again, last, where a log's tail shows them.
if (failures.length > 0) {
  console.log('\nfailed:');
  for (const f of failures) {
    console.log(`- ${relative(root, f.file) || '(no file)'}: ${f.test}`);
    for (const line of f.error.split('\n').slice(0, 8)) console.log(`    ${line}`);
  }
}
console.log(`\ntests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(status);
