// The router's configuration from flags and TESSERA_* environment variables (flags win).
// Everything wrong with it becomes a ConfigError with one sentence; main.ts prints it and exits 2.
import { parseAddress, parseAddressList } from '@tessera/proto';
import {
  ConfigError,
  boolSetting,
  intSetting,
  optionalText,
  readFlags,
  type FlagTable,
  type RawSettings,
} from '@tessera/config';

export type PoolMode = 'transaction' | 'session';
export type AuthMode = 'trust' | 'scram';

export interface RouterConfig {
  /** host:port clients connect to (port 0 = a free one). */
  listen: string;
  /** host:port of the coordinator's gRPC server, or a comma-separated list (the active one is used). */
  coordinator: string;
  /** Port of the Prometheus endpoint (0 = a free one), bound on the listen host. */
  metricsPort: number;
  /** Backends per (node, database, user). */
  poolSize: number;
  poolMode: PoolMode;
  maxClients: number;
  auth: AuthMode;
  /** Stable identity registered with the coordinator; defaults to router-<host>-<port>. */
  routerId?: string | undefined;
  /** Password the router uses when a node asks one (service login); never logged. */
  nodePassword?: string | undefined;
  /** Bearer token for the coordinator, when it listens off loopback. */
  token?: string | undefined;
  /** How long a client waits for a free backend before it gets an error. */
  acquireTimeoutMs: number;
  /**
   * The same wait for a session that already holds a backend on another node (a transaction
   * across nodes, session pooling): bounded shorter, so sessions holding one pool's backends
   * while they wait for another's cannot deadlock the pools (the lower of the two applies).
   */
  heldAcquireTimeoutMs: number;
  /** How long a new connection may take to log in (Postgres' authentication_timeout). */
  loginTimeoutMs: number;
  /** Role the router logs in to the home node as to read SCRAM verifiers (--auth scram). */
  authUser: string;
  /** That role's password, if the home node asks one; never logged. */
  authPassword?: string | undefined;
  /** PEM certificate chain and private key files; both set = TLS offered to clients. */
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  /** Refuse clients that do not upgrade to TLS (28000). */
  tlsRequired: boolean;
  /**
   * Router processes sharing the listen port (node:cluster, connections dealt round-robin). Each
   * gets poolSize / workers backends per pool and maxClients / workers clients (rounded up).
   */
  workers: number;
  /**
   * Reads of different clients that may share one backend connection when every backend of the
   * pool is busy (pipelined; 1 = never share).
   */
  pipelineDepth: number;
  /** How long a held statement (frozen range, node failing over) waits before 40001. */
  holdTimeoutMs: number;
  /** How long an epoch's acknowledgement waits for statements admitted under older epochs. */
  drainTimeoutMs: number;
  /**
   * How long a cross-node COMMIT retries COMMIT PREPARED on a node that did not confirm it
   * before it answers 08007 instead of COMMIT (the commit is decided; recovery finishes it).
   */
  commitFinishTimeoutMs: number;
  /**
   * How long a cross-node COMMIT keeps trying to log its decision on the coordinator (one
   * restarting, a standby taking over) before it answers 08007 (in doubt; recovery decides).
   */
  decideTimeoutMs: number;
}

export const USAGE = `Usage: tessera-router [flags]

Speaks the PostgreSQL wire protocol to applications and routes each statement to the node that
owns its rows, by the catalog it watches on the coordinator.

Flags (each also read from the environment variable shown):
  --listen HOST:PORT        TESSERA_LISTEN          client address (default 127.0.0.1:6432)
  --coordinator A[,B]       TESSERA_COORDINATOR     coordinator gRPC addresses; the active one is
                                                    followed (default 127.0.0.1:7400)
  --metrics-port PORT       TESSERA_METRICS_PORT    Prometheus /metrics port (default 6433, 0 = random)
  --pool-size N             TESSERA_POOL_SIZE       backends per node, database and user (default 20)
  --pool-mode MODE          TESSERA_POOL_MODE       transaction (default) or session
  --max-clients N           TESSERA_MAX_CLIENTS     client connections accepted at once (default 1000)
  --auth MODE               TESSERA_AUTH            trust (default) or scram
  --router-id ID            TESSERA_ROUTER_ID       identity registered with the coordinator
  --auth-user ROLE          TESSERA_AUTH_USER       role reading verifiers on home (default postgres)
  --acquire-timeout-ms MS   TESSERA_ACQUIRE_TIMEOUT_MS  wait for a free backend (default 30000)
  --held-acquire-timeout-ms MS
                    TESSERA_HELD_ACQUIRE_TIMEOUT_MS  the wait of a session that holds a backend
                                                    on another node (a transaction across nodes):
                                                    53300 after it, so sessions cannot deadlock
                                                    waiting for each other's pools (default 5000)
  --login-timeout-ms MS     TESSERA_LOGIN_TIMEOUT_MS    time a new connection has to log in
                                                    (default 10000)
  --tls-cert FILE           TESSERA_TLS_CERT        PEM certificate (chain); with --tls-key: TLS on
  --tls-key FILE            TESSERA_TLS_KEY         PEM private key
  --tls-required            TESSERA_TLS_REQUIRED=1  refuse clients that do not use TLS
  --workers N               TESSERA_WORKERS         router processes on the one port (default 1);
                                                    pool size and max clients are split among them,
                                                    worker i serves metrics on metrics port + i
  --pipeline-depth N        TESSERA_PIPELINE_DEPTH  when every backend is busy, up to N clients'
                                                    autocommit reads share one backend, pipelined,
                                                    instead of waiting (default 16, 1 = off)
  --hold-timeout-ms MS      TESSERA_HOLD_TIMEOUT_MS  how long a write to a frozen range (or a
                                                    statement for a node failing over) waits for
                                                    a later catalog before it fails with 40001
                                                    (default 15000)
  --drain-timeout-ms MS     TESSERA_DRAIN_TIMEOUT_MS how long acknowledging a catalog epoch waits
                                                    for statements admitted under older ones
                                                    (default 5000)
  --commit-finish-timeout-ms MS
                    TESSERA_COMMIT_FINISH_TIMEOUT_MS  how long a COMMIT across nodes retries a
                                                    node's COMMIT PREPARED before it answers
                                                    08007 instead of COMMIT (default 30000)
  --decide-timeout-ms MS    TESSERA_DECIDE_TIMEOUT_MS  how long a COMMIT across nodes keeps trying
                                                    to log its decision on the coordinator (a
                                                    standby taking over) before it answers 08007
                                                    (default 5000)
                            TESSERA_AUTH_PASSWORD   password of --auth-user, if home asks one
                            TESSERA_NODE_PASSWORD   password for nodes that ask one
                            TESSERA_ADMIN_TOKEN     bearer token for the coordinator
  --help                                            print this text
`;

type ValueKey =
  | 'listen'
  | 'coordinator'
  | 'metricsPort'
  | 'poolSize'
  | 'poolMode'
  | 'maxClients'
  | 'auth'
  | 'routerId'
  | 'acquireTimeoutMs'
  | 'heldAcquireTimeoutMs'
  | 'loginTimeoutMs'
  | 'authUser'
  | 'tlsCert'
  | 'tlsKey'
  | 'tlsRequired'
  | 'workers'
  | 'pipelineDepth'
  | 'holdTimeoutMs'
  | 'drainTimeoutMs'
  | 'commitFinishTimeoutMs'
  | 'decideTimeoutMs';

const FLAGS: FlagTable<ValueKey> = {
  '--listen': { env: 'TESSERA_LISTEN', key: 'listen' },
  '--coordinator': { env: 'TESSERA_COORDINATOR', key: 'coordinator' },
  '--metrics-port': { env: 'TESSERA_METRICS_PORT', key: 'metricsPort' },
  '--pool-size': { env: 'TESSERA_POOL_SIZE', key: 'poolSize' },
  '--pool-mode': { env: 'TESSERA_POOL_MODE', key: 'poolMode' },
  '--max-clients': { env: 'TESSERA_MAX_CLIENTS', key: 'maxClients' },
  '--auth': { env: 'TESSERA_AUTH', key: 'auth' },
  '--router-id': { env: 'TESSERA_ROUTER_ID', key: 'routerId' },
  '--acquire-timeout-ms': { env: 'TESSERA_ACQUIRE_TIMEOUT_MS', key: 'acquireTimeoutMs' },
  '--held-acquire-timeout-ms': {
    env: 'TESSERA_HELD_ACQUIRE_TIMEOUT_MS',
    key: 'heldAcquireTimeoutMs',
  },
  '--login-timeout-ms': { env: 'TESSERA_LOGIN_TIMEOUT_MS', key: 'loginTimeoutMs' },
  '--auth-user': { env: 'TESSERA_AUTH_USER', key: 'authUser' },
  '--tls-cert': { env: 'TESSERA_TLS_CERT', key: 'tlsCert' },
  '--tls-key': { env: 'TESSERA_TLS_KEY', key: 'tlsKey' },
  '--tls-required': { env: 'TESSERA_TLS_REQUIRED', key: 'tlsRequired', isSwitch: true },
  '--workers': { env: 'TESSERA_WORKERS', key: 'workers' },
  '--pipeline-depth': { env: 'TESSERA_PIPELINE_DEPTH', key: 'pipelineDepth' },
  '--hold-timeout-ms': { env: 'TESSERA_HOLD_TIMEOUT_MS', key: 'holdTimeoutMs' },
  '--drain-timeout-ms': { env: 'TESSERA_DRAIN_TIMEOUT_MS', key: 'drainTimeoutMs' },
  '--commit-finish-timeout-ms': {
    env: 'TESSERA_COMMIT_FINISH_TIMEOUT_MS',
    key: 'commitFinishTimeoutMs',
  },
  '--decide-timeout-ms': { env: 'TESSERA_DECIDE_TIMEOUT_MS', key: 'decideTimeoutMs' },
};

export type ParsedArgs = { help: true } | { help: false; config: RouterConfig };

/** Parses argv (without node and script) and the environment. Throws ConfigError. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const read = readFlags(argv, env, FLAGS);
  if (read.help) return { help: true };
  return { help: false, config: validate(read.raw, env) };
}

function validate(raw: RawSettings<ValueKey>, env: NodeJS.ProcessEnv): RouterConfig {
  const listen = address(raw.get('listen') ?? '127.0.0.1:6432', '--listen');
  const coordinatorText = raw.get('coordinator') ?? '127.0.0.1:7400';
  let coordinator: string;
  try {
    coordinator = parseAddressList(coordinatorText).join(',');
  } catch {
    throw new ConfigError(
      `--coordinator "${coordinatorText}" is not a comma-separated list of host:port addresses`,
    );
  }
  const poolMode = raw.get('poolMode') ?? 'transaction';
  if (poolMode !== 'transaction' && poolMode !== 'session') {
    throw new ConfigError(`--pool-mode must be transaction or session, not "${poolMode}"`);
  }
  const auth = raw.get('auth') ?? 'trust';
  if (auth !== 'trust' && auth !== 'scram')
    throw new ConfigError(`--auth must be trust or scram, not "${auth}"`);
  const tlsCert = optionalText(raw.get('tlsCert'));
  const tlsKey = optionalText(raw.get('tlsKey'));
  if ((tlsCert === undefined) !== (tlsKey === undefined))
    throw new ConfigError('--tls-cert and --tls-key go together: give both or neither');
  const tlsRequired = boolSetting(raw, 'tlsRequired', '--tls-required');
  if (tlsRequired && tlsCert === undefined)
    throw new ConfigError('--tls-required needs a certificate (--tls-cert and --tls-key)');
  const authUser = raw.get('authUser') ?? 'postgres';
  if (authUser === '') throw new ConfigError('--auth-user must not be empty');
  return {
    listen,
    coordinator,
    metricsPort: intSetting(raw, 'metricsPort', '--metrics-port', 6433, 0, 65535),
    poolSize: intSetting(raw, 'poolSize', '--pool-size', 20, 1, 10_000),
    poolMode,
    maxClients: intSetting(raw, 'maxClients', '--max-clients', 1000, 1, 1_000_000),
    auth,
    routerId: optionalText(raw.get('routerId')),
    nodePassword: optionalText(env['TESSERA_NODE_PASSWORD']),
    token: optionalText(env['TESSERA_ADMIN_TOKEN']),
    acquireTimeoutMs: intSetting(
      raw,
      'acquireTimeoutMs',
      '--acquire-timeout-ms',
      30_000,
      1,
      3_600_000,
    ),
    heldAcquireTimeoutMs: intSetting(
      raw,
      'heldAcquireTimeoutMs',
      '--held-acquire-timeout-ms',
      5_000,
      1,
      3_600_000,
    ),
    // Shorter than Postgres' 60 s authentication_timeout: a router holds many more
    // connections than a Postgres server, and a SCRAM login takes milliseconds.
    loginTimeoutMs: intSetting(raw, 'loginTimeoutMs', '--login-timeout-ms', 10_000, 100, 600_000),
    authUser,
    authPassword: optionalText(env['TESSERA_AUTH_PASSWORD']),
    tlsCert,
    tlsKey,
    tlsRequired,
    workers: intSetting(raw, 'workers', '--workers', 1, 1, 256),
    pipelineDepth: intSetting(raw, 'pipelineDepth', '--pipeline-depth', 16, 1, 1024),
    holdTimeoutMs: intSetting(raw, 'holdTimeoutMs', '--hold-timeout-ms', 15_000, 1, 3_600_000),
    drainTimeoutMs: intSetting(raw, 'drainTimeoutMs', '--drain-timeout-ms', 5_000, 1, 3_600_000),
    commitFinishTimeoutMs: intSetting(
      raw,
      'commitFinishTimeoutMs',
      '--commit-finish-timeout-ms',
      30_000,
      1,
      3_600_000,
    ),
    decideTimeoutMs: intSetting(raw, 'decideTimeoutMs', '--decide-timeout-ms', 5_000, 100, 600_000),
  };
}

function address(text: string, flag: string): string {
  try {
    parseAddress(text);
  } catch {
    throw new ConfigError(`${flag} "${text}" is not of the form host:port`);
  }
  return text;
}

/** Defaults for programmatic use (tests, `tessera up`): every field filled in. */
export function defaultConfig(overrides: Partial<RouterConfig> = {}): RouterConfig {
  const parsed = parseConfig([], {});
  if (parsed.help) throw new Error('unreachable');
  return { ...parsed.config, ...overrides };
}
