// The tessera-router command: configuration from flags and environment, then the router until
// SIGINT/SIGTERM. A bad configuration prints one sentence and exits 2. With --workers N this
// process is the primary and the routers are its workers (workers.ts).
import { ConfigError } from './errors.js';
import { USAGE, parseConfig } from './config.js';
import { startRouter } from './router.js';
import { isWorkerProcess, runPrimary, startWorker } from './workers.js';
import { createLogger } from '@tessera/telemetry';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseConfig(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`tessera-router: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    return;
  }
  const config = parsed.config;
  let stop: () => Promise<void>;
  if (config.workers > 1 && isWorkerProcess()) {
    stop = (await startWorker(config)).stop;
  } else if (config.workers > 1) {
    stop = runPrimary(config, createLogger('router')).stop;
  } else {
    stop = (await startRouter(config)).stop;
  }
  const shutdown = (): void => {
    void stop().then(() => process.exit());
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((e: unknown) => {
  process.stderr.write(`tessera-router: ${e instanceof Error ? e.message : String(e)}\n`);
  // An unusable TLS certificate is found at start: still a configuration error.
  process.exit(e instanceof ConfigError ? 2 : 1);
});
