// Where the monorepo's apps are on disk, found from this file's own location (src/ when run from
// sources, dist/ when built: both sit one level under apps/cli).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { shebangNodeFlags } from '@tessera/config';

/** apps/ */
export const APPS_DIR = fileURLToPath(new URL('../..', import.meta.url));

/** apps/cli/bin/tessera.js: the supervisor is this same binary with a hidden command. */
export const CLI_BIN = join(APPS_DIR, 'cli', 'bin', 'tessera.js');

/**
 * How to run an app's process (node arguments): its bin shim once the app is built, with the
 * Node flags the shim's `#!` line asks for; else its sources through tsx with the `development`
 * condition (so a fresh checkout runs without a build). Undefined when the app is not part of
 * this build; with `requireShim`, an app counts as part of it only once it ships its bin shim.
 */
export function appEntry(
  app: string,
  bin: string,
  opts: { requireShim?: boolean } = {},
): { args: string[] } | undefined {
  const dir = join(APPS_DIR, app);
  const shim = join(dir, 'bin', `${bin}.js`);
  const dist = join(dir, 'dist', 'main.js');
  const src = join(dir, 'src', 'main.ts');
  if (opts.requireShim && !existsSync(shim)) return undefined;
  if (existsSync(dist)) {
    if (!existsSync(shim)) return { args: [dist] };
    return { args: [...shebangNodeFlags(readFileSync(shim, 'utf8')), shim] };
  }
  if (existsSync(src)) return { args: ['--conditions=development', '--import', 'tsx', src] };
  // Neither built nor with an entry point yet: work in progress, not part of this build.
  return undefined;
}
