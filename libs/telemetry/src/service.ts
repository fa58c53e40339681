// How every Tessera service process starts and stops (tessera-coordinator, -mover, -agent): the
// configuration from flags and TESSERA_* variables (a bad one prints one sentence and exits 2),
// `--help`, the JSON logger, an unhandled rejection logged as fatal (exit 1), then the service
// until SIGTERM/SIGINT (a second signal stops waiting for the shutdown).
import { ConfigError } from '@tessera/config';
import { createLogger, type Logger } from './logger.js';

/** What a service's parseConfig returns: `--help`, or a configuration. */
export type ParsedArgs<C> = { readonly help: true } | { readonly help: false; readonly config: C };

export interface ServiceDefinition<C extends { readonly logLevel?: string | undefined }> {
  /** The process name without the `tessera-` prefix, also the logger's `service` field. */
  readonly name: string;
  readonly usage: string;
  /** Reads flags and environment; throws ConfigError on bad input. */
  readonly parse: (argv: readonly string[], env: NodeJS.ProcessEnv) => ParsedArgs<C>;
  readonly start: (config: C, log: Logger) => Promise<{ stop(): Promise<void> }>;
  /**
   * A start failure that is the configuration's fault (a port in use), as one sentence for
   * stderr and exit 2; undefined for any other failure (logged, and one sentence on stderr, exit 1).
   */
  readonly startConfigError?: (e: unknown, config: C) => string | undefined;
}

const text = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Runs `service` as this process. Returns once the service is started. */
export async function runService<C extends { readonly logLevel?: string | undefined }>(
  service: ServiceDefinition<C>,
): Promise<void> {
  const fail = (message: string, code: number): never => {
    process.stderr.write(`tessera-${service.name}: ${message}\n`);
    process.exit(code);
  };
  try {
    await run(service, fail);
  } catch (e) {
    fail(text(e), 1);
  }
}

async function run<C extends { readonly logLevel?: string | undefined }>(
  service: ServiceDefinition<C>,
  fail: (message: string, code: number) => never,
): Promise<void> {
  let parsed: ParsedArgs<C>;
  try {
    parsed = service.parse(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, 2);
    throw e;
  }
  if (parsed.help) {
    process.stdout.write(service.usage);
    process.exit(0);
  }
  const { config } = parsed;
  let log: Logger;
  try {
    log = createLogger(
      service.name,
      config.logLevel === undefined ? {} : { level: config.logLevel },
    );
  } catch (e) {
    fail(text(e), 2);
  }
  process.on('unhandledRejection', (e) => {
    log.fatal({ err: text(e) }, 'unhandled rejection; exiting');
    process.exit(1);
  });
  let running: { stop(): Promise<void> };
  try {
    running = await service.start(config, log);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, 2);
    const configFault = service.startConfigError?.(e, config);
    if (configFault !== undefined) fail(configFault, 2);
    log.fatal({ err: text(e) }, `${service.name} failed to start`);
    fail(`cannot start: ${text(e)}`, 1);
  }
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) process.exit(1);
    signalled = true;
    log.info({ signal }, 'shutting down');
    running.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: text(e) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
