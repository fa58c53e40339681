// The tessera-coordinator process: configuration from flags and TESSERA_* variables, then one
// coordinator until SIGTERM/SIGINT (libs/telemetry runService). Bad configuration, also one found
// at start (a metrics port in use), prints one sentence and exits 2.
import { runService } from '@tessera/telemetry';
import { parseConfig, USAGE } from './config.js';
import { startCoordinator } from './coordinator.js';

void runService({
  name: 'coordinator',
  usage: USAGE,
  parse: parseConfig,
  start: (config, log) => startCoordinator(config, { log }),
});
