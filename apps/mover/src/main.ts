// The tessera-mover process: configuration from flags and TESSERA_* variables, then one mover
// until SIGTERM/SIGINT (libs/telemetry runService). Bad configuration prints one sentence and
// exits 2.
import { runService } from '@tessera/telemetry';
import { parseConfig, USAGE } from './config.js';
import { startMover } from './mover.js';

void runService({
  name: 'mover',
  usage: USAGE,
  parse: parseConfig,
  start: (config, log) => startMover(config, { log }),
  startConfigError: (e, config) => {
    const message = e instanceof Error ? e.message : String(e);
    return /EADDRINUSE|listen/i.test(message)
      ? `cannot serve metrics on ${config.metricsHost}:${config.metricsPort}: ${message}`
      : undefined;
  },
});
