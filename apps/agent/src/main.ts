// The tessera-agent process: configuration from flags and TESSERA_* variables, then one agent
// until SIGTERM/SIGINT. Bad configuration prints one sentence and exits 2.
import { ConfigError } from '@tessera/config';
import { createLogger, type Logger } from '@tessera/telemetry';
import { startAgent } from './agent.js';
import { parseConfig, USAGE, type ParsedArgs } from './config.js';

function fail(message: string, code: number): never {
  process.stderr.write(`tessera-agent: ${message}\n`);
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
    log = createLogger('agent', config.logLevel === undefined ? {} : { level: config.logLevel });
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e), 2);
  }
  process.on('unhandledRejection', (e) => {
    log.fatal({ err: e instanceof Error ? e.message : String(e) }, 'unhandled rejection; exiting');
    process.exit(1);
  });
  let agent;
  try {
    agent = await startAgent(config, { log });
  } catch (e) {
    fail(`cannot start: ${e instanceof Error ? e.message : String(e)}`, 1);
  }
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) process.exit(1);
    signalled = true;
    log.info({ signal }, 'shutting down');
    agent.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e), 1));
