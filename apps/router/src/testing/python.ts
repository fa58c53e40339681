// Tests that run a program under Debian's Python need its driver package (python3-psycopg,
// python3-asyncpg, ...; apps/router/drivers/install.sh installs them). On a machine without it the
// test is skipped and says what to install, so `npm test` works on a fresh machine; with
// TESSERA_REQUIRE_DRIVERS=1 (.ci/run sets it after installing them) nothing is skipped.
import { spawnSync } from 'node:child_process';

/** Debian's Python: the one its python3-* packages install into. */
export const PYTHON = '/usr/bin/python3';

const known = new Map<string, boolean>();

/** `skip` for node:test: false when `module` imports, else the reason naming the package. */
export function skipWithoutPython(module: string, debianPackage: string): string | false {
  if (process.env['TESSERA_REQUIRE_DRIVERS'] === '1') return false;
  let present = known.get(module);
  if (present === undefined) {
    present = spawnSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;
    known.set(module, present);
  }
  return present
    ? false
    : `${PYTHON} cannot import ${module}: apt-get install ${debianPackage} (or run apps/router/drivers/install.sh)`;
}
