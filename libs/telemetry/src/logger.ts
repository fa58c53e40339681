// The one way services log: pino JSON lines on stdout, one `service` field, secrets redacted.
import { pino } from 'pino';
import type { DestinationStream, Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export interface LoggerOptions {
  /** trace, debug, info, warn, error, fatal or silent; else TESSERA_LOG_LEVEL; else info. */
  level?: string;
  /** Where the lines go (tests); stdout by default. */
  destination?: DestinationStream;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Field paths whose values are replaced by "[redacted]" wherever they appear (top level or one deep). */
export const REDACTED_PATHS: readonly string[] = [
  'password',
  'token',
  'authorization',
  'secret',
  'adminToken',
  'connectionString',
]
  .flatMap((key) => [key, `*.${key}`])
  .concat(['headers.authorization', 'req.headers.authorization', 'metadata.authorization']);

/** Throws an Error with a sentence naming the bad value when the level is not one pino knows. */
export function createLogger(service: string, opts: LoggerOptions = {}): Logger {
  const level =
    (opts.level ?? process.env['TESSERA_LOG_LEVEL'] ?? 'info').trim().toLowerCase() || 'info';
  if (!LEVELS.includes(level)) {
    throw new Error(
      `log level "${level}" is not one of ${LEVELS.join(', ')} (set by --log-level or TESSERA_LOG_LEVEL)`,
    );
  }
  const options = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
