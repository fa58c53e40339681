#!/usr/bin/env node
// `npm run bench -- <suite> ...`: runs the harness from its TypeScript sources through tsx with
// the `development` export condition, so a fresh checkout benchmarks without a build step.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const child = spawn(
  process.execPath,
  ['--conditions=development', '--import', 'tsx', main, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
// Ctrl-C reaches the child through the terminal's process group, so the shim ignores SIGINT and
// waits for the child to clean up; SIGTERM/SIGHUP sent to the shim alone are passed on.
process.on('SIGINT', () => {});
for (const sig of ['SIGTERM', 'SIGHUP']) {
  process.on(sig, () => child.kill(sig));
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
