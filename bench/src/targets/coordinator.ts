// The coordinator as its own process for the benches (it must not share the harness's event loop
// or CPU accounting), as a launcher for @tessera/testcluster. It logs at warn only, so it counts as
// up once CatalogService answers; a start that fails throws with the coordinator's output.
import { join } from 'node:path';
import { freePort } from '@tessera/pgctl';
import { coordinatorAnswers } from '@tessera/proto';
import type { CoordinatorLauncher, LaunchedCoordinator } from '@tessera/testcluster';
import { REPO_ROOT, nodeEntry } from '../harness/entry.js';
import { startProcess, waitFor, type Started } from '../harness/processes.js';

export interface BenchCoordinator extends LaunchedCoordinator {
  readonly proc: Started;
  /** Which entry point ran (built or sources). */
  readonly describe: string;
}

/** Starts the coordinator on `listen` (a free port for `:0`: its log does not say which). */
export const benchCoordinator: CoordinatorLauncher<BenchCoordinator> = async (at) => {
  const entry = nodeEntry(join(REPO_ROOT, 'apps', 'coordinator'), 'main');
  if (!entry) throw new Error('apps/coordinator has no entry point');
  const address = at.listen.endsWith(':0') ? `127.0.0.1:${await freePort()}` : at.listen;
  const flags = ['--catalog-url', at.catalogUrl, '--listen', address, '--metrics-port', '0'];
  const proc = startProcess(process.execPath, [...entry.args, ...flags], {
    env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' },
  });
  const up = await waitFor(
    async () => proc.child.exitCode !== null || (await coordinatorAnswers(address, 1_000)),
    60_000,
    200,
  );
  if (!up || proc.child.exitCode !== null) {
    await proc.stop();
    throw new Error(`the coordinator did not start: ${proc.output().trim().slice(-400)}`);
  }
  return {
    address,
    whenActive: Promise.resolve(),
    stop: () => proc.stop(),
    proc,
    describe: entry.describe,
  };
};
