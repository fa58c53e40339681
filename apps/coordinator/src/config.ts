// The coordinator's configuration from flags and TESSERA_* environment variables (flags win).
// Everything wrong with it becomes a ConfigError with one sentence; main.ts prints it and exits 2.
import { isLoopback, parseAddress } from '@tessera/proto';
import {
  ConfigError,
  intSetting,
  readFlags,
  type FlagTable,
  type RawSettings,
} from '@tessera/config';

export interface CoordinatorConfig {
  /** postgres:// URL of the catalog database. */
  catalogUrl: string;
  /** host:port the gRPC server binds (port 0 = a free one). */
  listen: string;
  /** Port of the Prometheus endpoint (0 = a free one); bound on the listen host. */
  metricsPort: number;
  /** Bearer token for admin calls; required when `listen` is not loopback. */
  adminToken?: string | undefined;
  /** How often a standby retries the leader lock, and the active one checks it still holds it. */
  standbyPollMs: number;
  /** How long a prepared transaction with no logged decision may wait before recovery aborts it. */
  recoveryGraceMs: number;
  /** Pause between recovery passes (0 = no background loop); parseConfig always sets it, and
   *  programmatic callers (tests) may leave it to the default. */
  recoveryIntervalMs?: number | undefined;
  /** How long a finished 2PC decision row is kept before it is deleted; default one hour. */
  decisionRetentionMs?: number | undefined;
  /** Router lease length granted by RouterLeaseService (default 10000). */
  routerLeaseMs?: number | undefined;
  /** A router without a lease counts as gone once its heartbeat is this old (default 15000). */
  routerStaleMs?: number | undefined;
  /** pino level; TESSERA_LOG_LEVEL or info when absent. */
  logLevel?: string | undefined;
}

export const DEFAULT_RECOVERY_INTERVAL_MS = 2_000;
export const DEFAULT_DECISION_RETENTION_MS = 3_600_000;

export const USAGE = `Usage: tessera-coordinator [flags]

Owns the Tessera catalog and serves it over gRPC. Only one coordinator is active at a time
(a Postgres advisory lock on the catalog database); others wait as standbys and answer
UNAVAILABLE until they take over.

Flags (each also read from the environment variable shown):
  --catalog-url URL         TESSERA_CATALOG_URL       postgres:// URL of the catalog database (required)
  --listen HOST:PORT        TESSERA_LISTEN            gRPC address (default 127.0.0.1:7400)
  --metrics-port PORT       TESSERA_METRICS_PORT      Prometheus /metrics port (default 7401, 0 = random)
                            TESSERA_ADMIN_TOKEN       bearer token for admin calls (required off loopback)
  --standby-poll-ms MS      TESSERA_STANDBY_POLL_MS   leader-lock retry and check interval (default 500)
  --recovery-grace-ms MS    TESSERA_RECOVERY_GRACE_MS wait before an undecided prepared txn is aborted (default 10000)
  --recovery-interval-ms MS TESSERA_RECOVERY_INTERVAL_MS
                                                      pause between recovery passes (default 2000, 0 = off)
  --decision-retention-ms MS
                            TESSERA_DECISION_RETENTION_MS
                                                      keep finished 2PC decisions this long (default
                                                      3600000, at least 120000: far above a router's
                                                      60 s decide deadline)
  --router-lease-ms MS      TESSERA_ROUTER_LEASE_MS   router lease length (default 10000)
  --router-stale-ms MS      TESSERA_ROUTER_STALE_MS   a router without a lease is not waited for once
                                                      its heartbeat is this old (default 15000)
  --log-level LEVEL         TESSERA_LOG_LEVEL         trace, debug, info, warn, error (default info)
  --help                                              print this text
`;

type SettingKey = Exclude<keyof CoordinatorConfig, 'adminToken'>;

const FLAGS: FlagTable<SettingKey> = {
  '--catalog-url': { env: 'TESSERA_CATALOG_URL', key: 'catalogUrl' },
  '--listen': { env: 'TESSERA_LISTEN', key: 'listen' },
  '--metrics-port': { env: 'TESSERA_METRICS_PORT', key: 'metricsPort' },
  '--standby-poll-ms': { env: 'TESSERA_STANDBY_POLL_MS', key: 'standbyPollMs' },
  '--recovery-grace-ms': { env: 'TESSERA_RECOVERY_GRACE_MS', key: 'recoveryGraceMs' },
  '--recovery-interval-ms': { env: 'TESSERA_RECOVERY_INTERVAL_MS', key: 'recoveryIntervalMs' },
  '--decision-retention-ms': { env: 'TESSERA_DECISION_RETENTION_MS', key: 'decisionRetentionMs' },
  '--router-lease-ms': { env: 'TESSERA_ROUTER_LEASE_MS', key: 'routerLeaseMs' },
  '--router-stale-ms': { env: 'TESSERA_ROUTER_STALE_MS', key: 'routerStaleMs' },
  '--log-level': { env: 'TESSERA_LOG_LEVEL', key: 'logLevel' },
};

export type ParsedArgs = { help: true } | { help: false; config: CoordinatorConfig };

/** Parses argv (without node and script) and the environment. Throws ConfigError. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const read = readFlags(argv, env, FLAGS);
  if (read.help) return { help: true };
  return { help: false, config: validateConfig(read.raw, env['TESSERA_ADMIN_TOKEN']) };
}

function validateConfig(
  raw: RawSettings<SettingKey>,
  token: string | undefined,
): CoordinatorConfig {
  const catalogUrl = raw.get('catalogUrl');
  if (catalogUrl === undefined || catalogUrl === '') {
    throw new ConfigError(
      'the catalog database URL is required: pass --catalog-url or set TESSERA_CATALOG_URL',
    );
  }
  checkPostgresUrl(catalogUrl);
  const listen = raw.get('listen') ?? '127.0.0.1:7400';
  let host: string;
  try {
    host = parseAddress(listen).host;
  } catch {
    throw new ConfigError(`--listen "${listen}" is not of the form host:port`);
  }
  const adminToken = token === undefined || token === '' ? undefined : token;
  if (!isLoopback(host) && adminToken === undefined) {
    throw new ConfigError(
      `the coordinator listens off loopback (${listen}), so TESSERA_ADMIN_TOKEN must be set to protect admin calls`,
    );
  }
  return {
    catalogUrl,
    listen,
    metricsPort: intSetting(raw, 'metricsPort', '--metrics-port', 7401, 0, 65535),
    adminToken,
    standbyPollMs: intSetting(raw, 'standbyPollMs', '--standby-poll-ms', 500, 10, 60_000),
    recoveryGraceMs: intSetting(
      raw,
      'recoveryGraceMs',
      '--recovery-grace-ms',
      10_000,
      0,
      86_400_000,
    ),
    recoveryIntervalMs: intSetting(
      raw,
      'recoveryIntervalMs',
      '--recovery-interval-ms',
      DEFAULT_RECOVERY_INTERVAL_MS,
      0,
      3_600_000,
    ),
    decisionRetentionMs: intSetting(
      raw,
      'decisionRetentionMs',
      '--decision-retention-ms',
      DEFAULT_DECISION_RETENTION_MS,
      120_000,
      365 * 86_400_000,
    ),
    routerLeaseMs: intSetting(raw, 'routerLeaseMs', '--router-lease-ms', 10_000, 1_000, 600_000),
    routerStaleMs: intSetting(raw, 'routerStaleMs', '--router-stale-ms', 15_000, 1_000, 3_600_000),
    logLevel: raw.get('logLevel'),
  };
}

function checkPostgresUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(
      `the catalog URL "${redact(url)}" is not a URL (expected postgres://user@host:port/db)`,
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError(
      `the catalog URL must start with postgres:// or postgresql://, not ${parsed.protocol}//`,
    );
  }
}

/** The URL without its password, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]*):[^@/]*@/, '$1:***@');
}
