// The agent's configuration from flags and TESSERA_* environment variables (flags win).
// Everything wrong with it becomes a ConfigError with one sentence; main.ts prints it and exits 2.
import { parseAddress, parseAddressList, formatAddress } from '@tessera/proto';
import {
  ConfigError,
  intSetting,
  optionalText,
  readFlags,
  type FlagTable,
  type RawSettings,
} from '@tessera/config';

export type AgentMode = 'native' | 'patroni' | 'cnpg';

export interface CnpgSource {
  /** A file holding the Cluster object as JSON (`kubectl get cluster NAME -o json`), re-read each probe. */
  file?: string | undefined;
  /** `namespace/name` of the Cluster, read from the Kubernetes API (in-cluster credentials). */
  cluster?: string | undefined;
  /** Instance (pod) name to host:port: `{instance}` is replaced; explicit entries win. */
  addressTemplate: string;
  addresses: ReadonlyMap<string, string>;
}

export interface AgentConfig {
  /** Coordinator gRPC addresses; calls go to the active one. */
  coordinators: string[];
  /** Name of the node (catalog) this instance belongs to. */
  node: string;
  /** Superuser connection to the local instance. */
  pgUrl: string;
  /** The instance's host:port as the catalog names it (default: host and port of pgUrl). */
  address: string;
  /** The application_name this instance streams under as a standby ('' = not given). */
  instanceName: string;
  /** The instance's data directory: needed to fence, start and rejoin it (native mode). */
  dataDir?: string | undefined;
  /** Directory of the Postgres binaries (default: found like the test kit does). */
  pgBin?: string | undefined;
  /** Where the server's log goes when this agent starts it. */
  pgLog?: string | undefined;
  mode: AgentMode;
  patroniUrl?: string | undefined;
  cnpg?: CnpgSource | undefined;
  probeIntervalMs: number;
  probeTimeoutMs: number;
  /** Consecutive failed probes before the instance counts as unreachable. */
  probeFailures: number;
  reportIntervalMs: number;
  /**
   * Past its lease, a primary keeps running only while every standby named in its
   * synchronous_standby_names streams and replied within this long (no standby was promoted).
   */
  failsafeReplyMs: number;
  metricsPort: number;
  /** Host the metrics endpoint binds. */
  metricsHost: string;
  token?: string | undefined;
  logLevel?: string | undefined;
}

export const USAGE = `Usage: tessera-agent --node NAME --pg-url URL [flags]

Watches one Postgres instance (a node's primary or one of its replicas), streams a report to the
coordinator every second, and carries out its directives: hold the primary's lease (and stop
Postgres when it cannot be renewed), promote, fence, start, rejoin. In the patroni and cnpg modes
it follows that HA engine instead and never promotes.

Flags (each also read from the environment variable shown):
  --coordinator A[,B]       TESSERA_COORDINATOR       coordinator gRPC addresses (default 127.0.0.1:7400)
  --node NAME               TESSERA_NODE              the node this instance belongs to (required)
  --pg-url URL              TESSERA_PG_URL            superuser postgres:// URL of the instance (required)
  --address HOST:PORT       TESSERA_ADDRESS           the instance's address in the catalog
                                                      (default: host and port of --pg-url; it may
                                                      be a proxy's: the agent starts the server
                                                      on the port of --pg-url)
  --name NAME               TESSERA_INSTANCE_NAME     the application_name it streams under as a
                                                      standby (a former primary rejoins under it)
  --data-dir DIR            TESSERA_DATA_DIR          the instance's data directory (native mode:
                                                      needed to fence, start and rejoin it)
  --pg-bin DIR              TESSERA_PG_BIN            directory of pg_ctl, pg_rewind, pg_basebackup
  --pg-log FILE             TESSERA_PG_LOG            server log when the agent starts Postgres
  --mode MODE               TESSERA_AGENT_MODE        native (default), patroni or cnpg
  --patroni-url URL         TESSERA_PATRONI_URL       Patroni REST API (patroni mode)
  --cnpg-cluster-file FILE  TESSERA_CNPG_CLUSTER_FILE the CloudNativePG Cluster as JSON (cnpg mode)
  --cnpg-cluster NS/NAME    TESSERA_CNPG_CLUSTER      read the Cluster from the Kubernetes API (cnpg mode)
  --cnpg-address TEMPLATE   TESSERA_CNPG_ADDRESS      instance address, {instance} replaced
                                                      (default {instance}:5432)
  --cnpg-address-map MAP    TESSERA_CNPG_ADDRESS_MAP  explicit name=host:port,... entries
  --probe-interval-ms MS    TESSERA_PROBE_INTERVAL_MS how often Postgres is probed (default 500)
  --probe-timeout-ms MS     TESSERA_PROBE_TIMEOUT_MS  a probe slower than this failed (default 2000)
  --probe-failures N        TESSERA_PROBE_FAILURES    failed probes in a row = unreachable (default 2)
  --report-interval-ms MS   TESSERA_REPORT_INTERVAL_MS
                                                      how often a report is sent (default 1000)
  --failsafe-reply-ms MS    TESSERA_FAILSAFE_REPLY_MS past its lease, a primary keeps running while
                                                      its synchronous standbys replied within this
                                                      (default 3000; 0 = stop at once)
  --metrics-port PORT       TESSERA_METRICS_PORT      Prometheus /metrics port (default 7420, 0 = random)
  --metrics-host HOST       TESSERA_METRICS_HOST      metrics bind address (default 127.0.0.1)
                            TESSERA_ADMIN_TOKEN       bearer token for the coordinator
  --log-level LEVEL         TESSERA_LOG_LEVEL         trace, debug, info, warn, error (default info)
  --help                                              print this text
`;

type ValueKey =
  | 'coordinators'
  | 'node'
  | 'pgUrl'
  | 'address'
  | 'instanceName'
  | 'dataDir'
  | 'pgBin'
  | 'pgLog'
  | 'mode'
  | 'patroniUrl'
  | 'cnpgFile'
  | 'cnpgCluster'
  | 'cnpgAddress'
  | 'cnpgAddressMap'
  | 'probeIntervalMs'
  | 'probeTimeoutMs'
  | 'probeFailures'
  | 'reportIntervalMs'
  | 'failsafeReplyMs'
  | 'metricsPort'
  | 'metricsHost'
  | 'logLevel';

const FLAGS: FlagTable<ValueKey> = {
  '--coordinator': { env: 'TESSERA_COORDINATOR', key: 'coordinators' },
  '--node': { env: 'TESSERA_NODE', key: 'node' },
  '--pg-url': { env: 'TESSERA_PG_URL', key: 'pgUrl' },
  '--address': { env: 'TESSERA_ADDRESS', key: 'address' },
  '--name': { env: 'TESSERA_INSTANCE_NAME', key: 'instanceName' },
  '--data-dir': { env: 'TESSERA_DATA_DIR', key: 'dataDir' },
  '--pg-bin': { env: 'TESSERA_PG_BIN', key: 'pgBin' },
  '--pg-log': { env: 'TESSERA_PG_LOG', key: 'pgLog' },
  '--mode': { env: 'TESSERA_AGENT_MODE', key: 'mode' },
  '--patroni-url': { env: 'TESSERA_PATRONI_URL', key: 'patroniUrl' },
  '--cnpg-cluster-file': { env: 'TESSERA_CNPG_CLUSTER_FILE', key: 'cnpgFile' },
  '--cnpg-cluster': { env: 'TESSERA_CNPG_CLUSTER', key: 'cnpgCluster' },
  '--cnpg-address': { env: 'TESSERA_CNPG_ADDRESS', key: 'cnpgAddress' },
  '--cnpg-address-map': { env: 'TESSERA_CNPG_ADDRESS_MAP', key: 'cnpgAddressMap' },
  '--probe-interval-ms': { env: 'TESSERA_PROBE_INTERVAL_MS', key: 'probeIntervalMs' },
  '--probe-timeout-ms': { env: 'TESSERA_PROBE_TIMEOUT_MS', key: 'probeTimeoutMs' },
  '--probe-failures': { env: 'TESSERA_PROBE_FAILURES', key: 'probeFailures' },
  '--report-interval-ms': { env: 'TESSERA_REPORT_INTERVAL_MS', key: 'reportIntervalMs' },
  '--failsafe-reply-ms': { env: 'TESSERA_FAILSAFE_REPLY_MS', key: 'failsafeReplyMs' },
  '--metrics-port': { env: 'TESSERA_METRICS_PORT', key: 'metricsPort' },
  '--metrics-host': { env: 'TESSERA_METRICS_HOST', key: 'metricsHost' },
  '--log-level': { env: 'TESSERA_LOG_LEVEL', key: 'logLevel' },
};

export type ParsedArgs = { help: true } | { help: false; config: AgentConfig };

/** Parses argv (without node and script) and the environment. Throws ConfigError. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const read = readFlags(argv, env, FLAGS);
  if (read.help) return { help: true };
  return { help: false, config: validate(read.raw, env) };
}

function validate(raw: RawSettings<ValueKey>, env: NodeJS.ProcessEnv): AgentConfig {
  let coordinators: string[];
  const coordText = raw.get('coordinators') ?? '127.0.0.1:7400';
  try {
    coordinators = parseAddressList(coordText);
  } catch {
    throw new ConfigError(
      `--coordinator "${coordText}" is not a comma-separated list of host:port addresses`,
    );
  }
  const node = raw.get('node');
  if (node === undefined || node === '')
    throw new ConfigError('the node name is required: pass --node or set TESSERA_NODE');
  const pgUrl = raw.get('pgUrl');
  if (pgUrl === undefined || pgUrl === '')
    throw new ConfigError('the instance URL is required: pass --pg-url or set TESSERA_PG_URL');
  const address = raw.get('address') ?? addressOfUrl(pgUrl);
  try {
    parseAddress(address);
  } catch {
    throw new ConfigError(`--address "${address}" is not of the form host:port`);
  }
  const mode = raw.get('mode') ?? 'native';
  if (mode !== 'native' && mode !== 'patroni' && mode !== 'cnpg')
    throw new ConfigError(`--mode must be native, patroni or cnpg, not "${mode}"`);
  const patroniUrl = optionalText(raw.get('patroniUrl'));
  if (mode === 'patroni') {
    if (patroniUrl === undefined)
      throw new ConfigError(
        '--mode patroni needs --patroni-url (its REST API, e.g. http://127.0.0.1:8008)',
      );
    checkHttpUrl(patroniUrl, '--patroni-url');
  }
  let cnpg: CnpgSource | undefined;
  if (mode === 'cnpg') {
    const file = optionalText(raw.get('cnpgFile'));
    const cluster = optionalText(raw.get('cnpgCluster'));
    if ((file === undefined) === (cluster === undefined))
      throw new ConfigError(
        '--mode cnpg needs exactly one of --cnpg-cluster-file and --cnpg-cluster',
      );
    if (cluster !== undefined && !/^[a-z0-9-]+\/[a-z0-9.-]+$/.test(cluster))
      throw new ConfigError(`--cnpg-cluster "${cluster}" is not of the form namespace/name`);
    cnpg = {
      file,
      cluster,
      addressTemplate: raw.get('cnpgAddress') ?? '{instance}:5432',
      addresses: addressMap(raw.get('cnpgAddressMap') ?? ''),
    };
  }
  const dataDir = optionalText(raw.get('dataDir'));
  const probeIntervalMs = intSetting(
    raw,
    'probeIntervalMs',
    '--probe-interval-ms',
    500,
    50,
    60_000,
  );
  const reportIntervalMs = intSetting(
    raw,
    'reportIntervalMs',
    '--report-interval-ms',
    1000,
    50,
    60_000,
  );
  return {
    coordinators,
    node,
    pgUrl,
    address,
    instanceName: raw.get('instanceName') ?? '',
    dataDir,
    pgBin: optionalText(raw.get('pgBin')),
    pgLog: optionalText(raw.get('pgLog')),
    mode,
    patroniUrl,
    cnpg,
    probeIntervalMs,
    probeTimeoutMs: intSetting(raw, 'probeTimeoutMs', '--probe-timeout-ms', 2000, 50, 60_000),
    probeFailures: intSetting(raw, 'probeFailures', '--probe-failures', 2, 1, 100),
    reportIntervalMs,
    failsafeReplyMs: intSetting(raw, 'failsafeReplyMs', '--failsafe-reply-ms', 3000, 0, 600_000),
    metricsPort: intSetting(raw, 'metricsPort', '--metrics-port', 7420, 0, 65535),
    metricsHost: raw.get('metricsHost') ?? '127.0.0.1',
    token: optionalText(env['TESSERA_ADMIN_TOKEN']),
    logLevel: raw.get('logLevel'),
  };
}

/** The user and password of a (validated) --pg-url: the agent's login on its node's primary too. */
export function loginOfUrl(url: string): { user: string; password?: string } {
  const u = new URL(url);
  const user = decodeURIComponent(u.username) || 'postgres';
  return u.password === '' ? { user } : { user, password: decodeURIComponent(u.password) };
}

/**
 * The port the instance's server listens on, which the agent starts it on (rejoin, restart): the
 * port of --pg-url, its own connection to the server. --address is what the catalog and every
 * other client dial, which may be a proxy's or a load balancer's port in front of the server.
 */
export function serverPortOf(config: Pick<AgentConfig, 'pgUrl' | 'address'>): number {
  try {
    const u = new URL(config.pgUrl);
    if (u.hostname !== '') return u.port === '' ? 5432 : Number(u.port);
  } catch {
    // not a URL: the address is all there is
  }
  return parseAddress(config.address).port;
}

function addressOfUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`--pg-url is not a URL (expected postgres://user@host:port/db)`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new ConfigError(`--pg-url must start with postgres:// or postgresql://`);
  if (parsed.hostname === '')
    throw new ConfigError('--pg-url names no host (the agent reaches its instance over TCP)');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return formatAddress(host, parsed.port === '' ? 5432 : Number(parsed.port));
}

function checkHttpUrl(text: string, flag: string): void {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new ConfigError(`${flag} "${text}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new ConfigError(`${flag} must be an http:// or https:// URL, not ${u.protocol}//`);
}

function addressMap(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of text.split(',')) {
    const e = entry.trim();
    if (e === '') continue;
    const eq = e.indexOf('=');
    const name = e.slice(0, eq).trim();
    const addr = e.slice(eq + 1).trim();
    try {
      if (eq <= 0) throw new Error();
      parseAddress(addr);
    } catch {
      throw new ConfigError(`--cnpg-address-map entry "${e}" is not of the form name=host:port`);
    }
    out.set(name, addr);
  }
  return out;
}
