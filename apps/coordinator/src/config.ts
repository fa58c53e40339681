// The coordinator's configuration from flags and TESSERA_* environment variables (flags win).
// Everything wrong with it becomes a ConfigError with one sentence; main.ts prints it and exits 2.
import { isLoopback, parseAddress } from '@tessera/proto';
import { parseCatalogUrl } from './leader/catalog-url.js';
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
  /** The address clients reach this coordinator at (default: the bound listen address). */
  advertise?: string | undefined;
  /** A primary's lease, granted to its agent with every report. */
  leaseMs?: number | undefined;
  /** Waited beyond a lapsed lease before its replica is promoted (clock-rate and delivery slack). */
  leaseMarginMs?: number | undefined;
  /** What commits do while a node has no synchronous replica: wait, or go on alone (degraded). */
  durability?: DurabilityText | undefined;
  /** An agent's report older than this is stale: its agent may be gone (default 3000). */
  reportFreshMs?: number | undefined;
}

export type DurabilityText = 'required' | 'preferred';

export const DEFAULT_LEASE_MS = 5_000;
export const DEFAULT_LEASE_MARGIN_MS = 1_000;
export const DEFAULT_REPORT_FRESH_MS = 3_000;

export const DEFAULT_RECOVERY_INTERVAL_MS = 2_000;
export const DEFAULT_DECISION_RETENTION_MS = 3_600_000;

export const USAGE = `Usage: tessera-coordinator [flags]

Owns the Tessera catalog and serves it over gRPC. Only one coordinator is active at a time
(a Postgres advisory lock on the catalog database); others wait as standbys and answer
UNAVAILABLE until they take over.

Flags (each also read from the environment variable shown):
  --catalog-url URL         TESSERA_CATALOG_URL       postgres:// URL of the catalog database (required);
                                                      several servers as postgres://u@h1:p1,h2:p2/db
                                                      (the home node's primary and replicas)
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
  --advertise HOST:PORT     TESSERA_ADVERTISE         the address clients reach this coordinator at
                                                      (default: the bound --listen address); a
                                                      standby names the active one's to its callers
  --lease-ms MS             TESSERA_LEASE_MS          a primary's lease (default 5000)
  --lease-margin-ms MS      TESSERA_LEASE_MARGIN_MS   waited past a lapsed lease before promoting
                                                      (default 1000)
  --durability MODE         TESSERA_DURABILITY        without a synchronous replica, commits wait
                                                      (required) or go on alone and the node is
                                                      degraded, not failed over (preferred, default)
  --report-fresh-ms MS      TESSERA_REPORT_FRESH_MS   an agent's report older than this counts as
                                                      stale: its agent may be gone (default 3000)
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
  '--advertise': { env: 'TESSERA_ADVERTISE', key: 'advertise' },
  '--lease-ms': { env: 'TESSERA_LEASE_MS', key: 'leaseMs' },
  '--lease-margin-ms': { env: 'TESSERA_LEASE_MARGIN_MS', key: 'leaseMarginMs' },
  '--durability': { env: 'TESSERA_DURABILITY', key: 'durability' },
  '--report-fresh-ms': { env: 'TESSERA_REPORT_FRESH_MS', key: 'reportFreshMs' },
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
    advertise: advertiseOf(raw.get('advertise')),
    leaseMs: intSetting(raw, 'leaseMs', '--lease-ms', DEFAULT_LEASE_MS, 500, 600_000),
    leaseMarginMs: intSetting(
      raw,
      'leaseMarginMs',
      '--lease-margin-ms',
      DEFAULT_LEASE_MARGIN_MS,
      100,
      600_000,
    ),
    durability: durabilityOf(raw.get('durability')),
    reportFreshMs: intSetting(
      raw,
      'reportFreshMs',
      '--report-fresh-ms',
      DEFAULT_REPORT_FRESH_MS,
      500,
      600_000,
    ),
  };
}

function advertiseOf(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    parseAddress(text);
  } catch {
    throw new ConfigError(`--advertise "${text}" is not of the form host:port`);
  }
  return text;
}

function durabilityOf(text: string | undefined): DurabilityText {
  const d = text ?? 'preferred';
  if (d !== 'required' && d !== 'preferred')
    throw new ConfigError(`--durability must be required or preferred, not "${d}"`);
  return d;
}

function checkPostgresUrl(url: string): void {
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
    if (scheme !== undefined)
      throw new ConfigError(
        `the catalog URL must start with postgres:// or postgresql://, not ${scheme}://`,
      );
  }
  try {
    parseCatalogUrl(url);
  } catch (e) {
    throw new ConfigError(
      `the catalog URL "${redact(url)}" is not a URL (expected postgres://user@host:port/db): ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/** The URL without its password, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]*):[^@/]*@/, '$1:***@');
}
