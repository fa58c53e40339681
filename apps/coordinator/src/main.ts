// The tessera-coordinator process: configuration from flags and TESSERA_* variables, then one
// coordinator until SIGTERM/SIGINT. Bad configuration prints one sentence and exits 2.
import { createLogger, type Logger } from '@tessera/telemetry';
import { parseConfig, USAGE, type ParsedArgs } from './config.js';
import { startCoordinator } from './coordinator.js';
import { ConfigError } from './errors.js';

function fail(message: string, code: number): never {
  process.stderr.write(`tessera-coordinator: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let parsed: ParsedArgs;
  try {
    parsed = parseConfig(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, 2);
    throw e;
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const { config } = parsed;
  let log: Logger;
  try {
    log = createLogger(
      'coordinator',
      config.logLevel === undefined ? {} : { level: config.logLevel },
    );
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e), 2);
  }
  process.on('unhandledRejection', (e) => {
    log.fatal({ err: e instanceof Error ? e.message : String(e) }, 'unhandled rejection; exiting');
    process.exit(1);
  });

  let coordinator;
  try {
    coordinator = await startCoordinator(config, { log });
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, 2);
    log.fatal({ err: e instanceof Error ? e.message : String(e) }, 'coordinator failed to start');
    process.exit(1);
  }

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) process.exit(1); // a second signal: stop waiting
    signalled = true;
    log.info({ signal }, 'shutting down');
    coordinator.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e instanceof Error ? e.message : String(e) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e), 1));
