#!/usr/bin/env node
// `npm run soak -- ...`: builds what the soak starts (the coordinator's and router's bins run
// their dist/; Nx's cache makes this quick when nothing changed), then runs the harness. `check`
// needs no build. Set TESSERA_SOAK_NO_BUILD=1 to skip the build.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const argv = process.argv.slice(2);
if (
  argv[0] !== 'check' &&
  !argv.includes('--help') &&
  argv.length > 0 &&
  !process.env.TESSERA_SOAK_NO_BUILD
) {
  const r = spawnSync(
    `${root}/node_modules/.bin/nx`,
    ['run-many', '-t', 'build', '-p', '@tessera/soak', '--output-style=static'],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' },
    },
  );
  if (r.status !== 0) {
    process.stderr.write('soak: the build failed (npm run build shows why)\n');
    process.exit(1);
  }
}
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
// Long runs hold a large history in memory while it is checked.
const child = spawn(
  process.execPath,
  ['--max-old-space-size=8192', '--conditions=development', '--import', 'tsx', main, ...argv],
  { stdio: 'inherit' },
);
process.on('SIGINT', () => {});
for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
