// Test helper (not exported): the real coordinator as a child process (testcluster's
// coordinatorProcess), so a test can SIGKILL it at a chosen moment. Run from its TypeScript
// sources, as the test runner runs everything.
import { fileURLToPath } from 'node:url';
import {
  coordinatorProcess,
  spawnCoordinatorProcess,
  type CoordinatorLauncher,
  type CoordinatorProcess,
  type CoordinatorProcessOptions,
} from '@tessera/testcluster';

export type { CoordinatorProcess };

const MAIN = fileURLToPath(new URL('../../../../apps/coordinator/src/main.ts', import.meta.url));

export interface RecoveryTiming {
  graceMs: number;
  intervalMs: number;
}

function processOptions(t: RecoveryTiming): CoordinatorProcessOptions {
  return {
    entry: ['--conditions=development', '--import', 'tsx', MAIN],
    args: [
      '--standby-poll-ms',
      '100',
      '--recovery-grace-ms',
      String(t.graceMs),
      '--recovery-interval-ms',
      String(t.intervalMs),
    ],
  };
}

/** How startCatalog starts its coordinator. */
export function coordinatorLauncher(t: RecoveryTiming): CoordinatorLauncher<CoordinatorProcess> {
  return coordinatorProcess(processOptions(t));
}

/** Another coordinator on `catalogUrl` (a standby while one is active), on a free port. */
export function spawnCoordinator(
  catalogUrl: string,
  t: RecoveryTiming,
): Promise<CoordinatorProcess> {
  return spawnCoordinatorProcess(catalogUrl, '127.0.0.1:0', processOptions(t));
}
