// The tessera-agent process: configuration from flags and TESSERA_* variables, then one agent
// until SIGTERM/SIGINT (libs/telemetry runService). Bad configuration prints one sentence and
// exits 2.
import { runService } from '@tessera/telemetry';
import { startAgent } from './agent.js';
import { parseConfig, USAGE } from './config.js';

void runService({
  name: 'agent',
  usage: USAGE,
  parse: parseConfig,
  start: (config, log) => startAgent(config, { log }),
});
