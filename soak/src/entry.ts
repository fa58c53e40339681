// Paths of the repository and of the programs the soak starts as processes: the services' own
// published bins (which run their built dist/), and the soak's helper programs (its dist/ when
// that is newer than its sources, else the sources through tsx).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shebangNodeFlags } from '@tessera/config';

/** The monorepo root (this file is soak/src/entry.ts or soak/dist/entry.js). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SOAK_ROOT = join(REPO_ROOT, 'soak');

/**
 * Node arguments that run a service's published bin, e.g. `apps/router/bin/tessera-router.js`,
 * with the Node flags its `#!` line asks for; throws when it is not built.
 */
export function serviceArgs(app: string, bin: string): string[] {
  const path = join(REPO_ROOT, 'apps', app, 'bin', `${bin}.js`);
  if (!existsSync(path)) throw new Error(`${path} does not exist`);
  const dist = join(REPO_ROOT, 'apps', app, 'dist', 'main.js');
  if (!existsSync(dist))
    throw new Error(`apps/${app} is not built (no dist/main.js): run npm run build first`);
  return [...shebangNodeFlags(readFileSync(path, 'utf8')), path];
}

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMtimeMs(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** Node arguments that run one of the soak's own programs (`net/proxy-main`, ...). */
export function soakProgram(file: string): string[] {
  const dist = join(SOAK_ROOT, 'dist', `${file}.js`);
  if (existsSync(dist) && statSync(dist).mtimeMs >= newestMtimeMs(join(SOAK_ROOT, 'src')))
    return [dist];
  return ['--conditions=development', '--import', 'tsx', join(SOAK_ROOT, 'src', `${file}.ts`)];
}
