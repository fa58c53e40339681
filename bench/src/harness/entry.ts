// How to run a TypeScript program of this repository as its own node process: the compiled
// dist/ file when it is at least as new as every source file, else the sources through tsx with
// the `development` condition (a stale build would benchmark yesterday's code).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The monorepo root (this file is bench/src/harness/entry.ts, or bench/dist/harness/entry.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export interface NodeEntry {
  /** Arguments for `node` before the program's own. */
  args: string[];
  /** "dist/main.js (built)" or "src/main.ts via tsx", for the output. */
  describe: string;
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

/**
 * `projectDir` holds src/ and maybe dist/; `file` is the program's path below src/ without
 * extension (e.g. `main`, `targets/passthrough`). Undefined when neither form exists.
 */
export function nodeEntry(projectDir: string, file: string): NodeEntry | undefined {
  const src = join(projectDir, 'src', `${file}.ts`);
  const dist = join(projectDir, 'dist', `${file}.js`);
  const rel = (p: string) => relative(REPO_ROOT, p);
  if (
    existsSync(dist) &&
    (!existsSync(src) || statSync(dist).mtimeMs >= newestMtimeMs(join(projectDir, 'src')))
  ) {
    return { args: [dist], describe: `${rel(dist)} (built)` };
  }
  if (existsSync(src)) {
    return {
      args: ['--conditions=development', '--import', 'tsx', src],
      describe: `${rel(src)} via tsx${existsSync(dist) ? ' (dist/ is older than src/)' : ''}`,
    };
  }
  return undefined;
}
