// The mover's configuration from flags and TESSERA_* environment variables (flags win). Anything
// wrong becomes a ConfigError with one sentence; main.ts prints it and exits 2.
import { hostname } from 'node:os';
import {
  ConfigError,
  intSetting,
  optionalText,
  readFlags,
  type FlagTable,
  type RawSettings,
} from '@tessera/config';
import { parseAddress } from '@tessera/proto';

export interface MoverConfig {
  /** Coordinator gRPC address. */
  coordinator: string;
  /** Stable identity: a restarted mover with the same id resumes its jobs at once. */
  moverId: string;
  /** Prometheus /metrics port (0 = a free one), on 127.0.0.1. */
  metricsPort: number;
  metricsHost: string;
  token?: string | undefined;
  /** Role the mover logs into every node as (a superuser: subscriptions need it on Postgres 15). */
  nodeUser: string;
  nodePassword?: string | undefined;
  /** How long a job claim holds without renewal; renewed every third of it. */
  leaseMs: number;
  /** Pause between claims when there is nothing to do. */
  pollMs: number;
  /** Jobs this mover runs at once. */
  maxJobs: number;
  /** A cutover that would hold writes longer than this is aborted before the flip and retried. */
  cutoverBudgetMs: number;
  /** How many times a cutover is tried before the job fails. */
  cutoverAttempts: number;
  /** A marker round trip must take at most this, 3 times in a row, before a cutover starts. */
  catchupBudgetMs: number;
  /** A move gives up catching up after this long. */
  syncTimeoutMs: number;
  /** Wait at most this for 2PC recovery to clear Tessera prepared transactions on the source. */
  preparedWaitMs: number;
  /** Rows per DELETE batch of the cleanup on the old owner, and the pace (0 = unthrottled). */
  deleteBatchRows: number;
  deleteRowsPerSec: number;
  /** About this many rows per verification chunk. */
  verifyChunkRows: number;
  logLevel?: string | undefined;
}

export const USAGE = `Usage: tessera-mover [flags]

Runs the jobs the coordinator queues: moving, splitting and merging key ranges online, adding
and draining nodes, rebalancing, verifying. Claims each job with a lease it renews; a job whose
mover died is taken over by the next mover once the lease lapses. Several movers may run.

Flags (each also read from the environment variable shown):
  --coordinator HOST:PORT   TESSERA_COORDINATOR       coordinator gRPC address (default 127.0.0.1:7400)
  --mover-id ID             TESSERA_MOVER_ID          identity (default mover-<hostname>); a restarted
                                                      mover with the same id resumes its jobs at once
  --metrics-port PORT       TESSERA_METRICS_PORT      Prometheus /metrics port (default 7421, 0 = random)
                            TESSERA_ADMIN_TOKEN       bearer token for the coordinator (off loopback)
  --node-user ROLE          TESSERA_NODE_USER         role used on every node (default postgres; a
                                                      superuser: CREATE SUBSCRIPTION needs it on PG 15)
                            TESSERA_NODE_PASSWORD     its password, if the nodes ask for one
  --lease-ms MS             TESSERA_LEASE_MS          job lease (default 15000)
  --poll-ms MS              TESSERA_POLL_MS           pause between claims when idle (default 500)
  --max-jobs N              TESSERA_MAX_JOBS          jobs run at once (default 4)
  --cutover-budget-ms MS    TESSERA_CUTOVER_BUDGET_MS abort a cutover before its flip past this (default 2000)
  --cutover-attempts N      TESSERA_CUTOVER_ATTEMPTS  cutovers tried before the job fails (default 10)
  --catchup-budget-ms MS    TESSERA_CATCHUP_BUDGET_MS marker round trip needed 3 times in a row
                                                      before a cutover (default 20)
  --sync-timeout-ms MS      TESSERA_SYNC_TIMEOUT_MS   give up catching up after this (default 1800000)
  --prepared-wait-ms MS     TESSERA_PREPARED_WAIT_MS  wait for 2PC recovery on the source (default 30000)
  --delete-batch-rows N     TESSERA_DELETE_BATCH_ROWS rows per DELETE on the old owner (default 10000)
  --delete-rows-per-sec N   TESSERA_DELETE_ROWS_PER_SEC
                                                      pace of that delete (default 50000, 0 = unthrottled)
  --verify-chunk-rows N     TESSERA_VERIFY_CHUNK_ROWS rows per verification chunk (default 50000)
  --log-level LEVEL         TESSERA_LOG_LEVEL         trace, debug, info, warn, error (default info)
  --help                                              print this text
`;

type SettingKey = Exclude<keyof MoverConfig, 'token' | 'nodePassword' | 'metricsHost'>;

const FLAGS: FlagTable<SettingKey> = {
  '--coordinator': { env: 'TESSERA_COORDINATOR', key: 'coordinator' },
  '--mover-id': { env: 'TESSERA_MOVER_ID', key: 'moverId' },
  '--metrics-port': { env: 'TESSERA_METRICS_PORT', key: 'metricsPort' },
  '--node-user': { env: 'TESSERA_NODE_USER', key: 'nodeUser' },
  '--lease-ms': { env: 'TESSERA_LEASE_MS', key: 'leaseMs' },
  '--poll-ms': { env: 'TESSERA_POLL_MS', key: 'pollMs' },
  '--max-jobs': { env: 'TESSERA_MAX_JOBS', key: 'maxJobs' },
  '--cutover-budget-ms': { env: 'TESSERA_CUTOVER_BUDGET_MS', key: 'cutoverBudgetMs' },
  '--cutover-attempts': { env: 'TESSERA_CUTOVER_ATTEMPTS', key: 'cutoverAttempts' },
  '--catchup-budget-ms': { env: 'TESSERA_CATCHUP_BUDGET_MS', key: 'catchupBudgetMs' },
  '--sync-timeout-ms': { env: 'TESSERA_SYNC_TIMEOUT_MS', key: 'syncTimeoutMs' },
  '--prepared-wait-ms': { env: 'TESSERA_PREPARED_WAIT_MS', key: 'preparedWaitMs' },
  '--delete-batch-rows': { env: 'TESSERA_DELETE_BATCH_ROWS', key: 'deleteBatchRows' },
  '--delete-rows-per-sec': { env: 'TESSERA_DELETE_ROWS_PER_SEC', key: 'deleteRowsPerSec' },
  '--verify-chunk-rows': { env: 'TESSERA_VERIFY_CHUNK_ROWS', key: 'verifyChunkRows' },
  '--log-level': { env: 'TESSERA_LOG_LEVEL', key: 'logLevel' },
};

export type ParsedArgs = { help: true } | { help: false; config: MoverConfig };

/** Everything with its default, for programmatic callers (tests, `tessera up`). */
export function defaultConfig(overrides: Partial<MoverConfig> = {}): MoverConfig {
  return {
    coordinator: '127.0.0.1:7400',
    moverId: `mover-${hostname()}`,
    metricsPort: 7421,
    metricsHost: '127.0.0.1',
    nodeUser: 'postgres',
    leaseMs: 15_000,
    pollMs: 500,
    maxJobs: 4,
    cutoverBudgetMs: 2_000,
    cutoverAttempts: 10,
    catchupBudgetMs: 20,
    syncTimeoutMs: 1_800_000,
    preparedWaitMs: 30_000,
    deleteBatchRows: 10_000,
    deleteRowsPerSec: 50_000,
    verifyChunkRows: 50_000,
    ...overrides,
  };
}

/** Parses argv (without node and script) and the environment. Throws ConfigError. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const read = readFlags(argv, env, FLAGS);
  if (read.help) return { help: true };
  return { help: false, config: validate(read.raw, env) };
}

function validate(raw: RawSettings<SettingKey>, env: NodeJS.ProcessEnv): MoverConfig {
  const d = defaultConfig();
  const coordinator = raw.get('coordinator') ?? d.coordinator;
  try {
    parseAddress(coordinator);
  } catch {
    throw new ConfigError(`--coordinator "${coordinator}" is not of the form host:port`);
  }
  const moverId = raw.get('moverId') ?? d.moverId;
  if (!/^[A-Za-z0-9._:-]{1,63}$/.test(moverId))
    throw new ConfigError(
      `--mover-id "${moverId}" must be 1 to 63 letters, digits, dots, dashes, colons or underscores`,
    );
  const nodeUser = raw.get('nodeUser') ?? d.nodeUser;
  if (nodeUser === '') throw new ConfigError('--node-user must not be empty');
  const int = (k: SettingKey, flag: string, def: number, min: number, max: number) =>
    intSetting(raw, k, flag, def, min, max);
  const leaseMs = int('leaseMs', '--lease-ms', d.leaseMs, 1_000, 600_000);
  return {
    coordinator,
    moverId,
    metricsPort: int('metricsPort', '--metrics-port', d.metricsPort, 0, 65535),
    metricsHost: '127.0.0.1',
    token: optionalText(env['TESSERA_ADMIN_TOKEN']),
    nodeUser,
    nodePassword: optionalText(env['TESSERA_NODE_PASSWORD']),
    leaseMs,
    pollMs: int('pollMs', '--poll-ms', d.pollMs, 10, 60_000),
    maxJobs: int('maxJobs', '--max-jobs', d.maxJobs, 1, 64),
    cutoverBudgetMs: int('cutoverBudgetMs', '--cutover-budget-ms', d.cutoverBudgetMs, 50, 60_000),
    cutoverAttempts: int('cutoverAttempts', '--cutover-attempts', d.cutoverAttempts, 1, 1_000),
    catchupBudgetMs: int('catchupBudgetMs', '--catchup-budget-ms', d.catchupBudgetMs, 1, 60_000),
    syncTimeoutMs: int('syncTimeoutMs', '--sync-timeout-ms', d.syncTimeoutMs, 1_000, 86_400_000),
    preparedWaitMs: int('preparedWaitMs', '--prepared-wait-ms', d.preparedWaitMs, 0, 3_600_000),
    deleteBatchRows: int('deleteBatchRows', '--delete-batch-rows', d.deleteBatchRows, 1, 1_000_000),
    deleteRowsPerSec: int(
      'deleteRowsPerSec',
      '--delete-rows-per-sec',
      d.deleteRowsPerSec,
      0,
      100_000_000,
    ),
    verifyChunkRows: int(
      'verifyChunkRows',
      '--verify-chunk-rows',
      d.verifyChunkRows,
      100,
      100_000_000,
    ),
    logLevel: raw.get('logLevel'),
  };
}
