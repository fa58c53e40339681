// Streaming replicas for tests: a primary with standbys made by `pg_basebackup -R`, with
// wal_log_hints on (so pg_rewind can bring a former primary back) and, when asked, synchronous:
// the primary's synchronous_standby_names names its standbys, so a commit is acknowledged only
// once a standby has flushed it.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  STREAMING_SETTINGS,
  baseBackup,
  signalServer,
  standbyName,
  writeSettings,
} from '@tessera/pgctl';
import {
  newServerDir,
  serverHandle,
  startOnFreePort,
  startPostgres,
  type PgServer,
  type PostgresOptions,
} from './postgres.js';

/**
 * What a replicated primary needs on top of the test settings: commits wait for the synchronous
 * standby (the test template turns synchronous_commit off), hints for pg_rewind, and standbys that
 * report every second so lag and liveness are current.
 */
export const REPLICATION_SETTINGS: Readonly<Record<string, string>> = {
  ...STREAMING_SETTINGS,
  synchronous_commit: 'on',
  // pg_rewind needs it (the test template turns it off).
  full_page_writes: 'on',
};

export interface ReplicaOptions {
  name?: string;
  /** application_name it streams under; default standbyName(node label, host, port of the replica dir). */
  applicationName?: string;
  settings?: Record<string, string>;
}

export interface StandbyServer extends PgServer {
  /** The name it streams under (pg_stat_replication.application_name on the primary). */
  readonly applicationName: string;
}

/** A standby of `primary`: a base backup of it, started on a free port, streaming. */
export async function startReplica(
  primary: PgServer,
  opts: ReplicaOptions = {},
): Promise<StandbyServer> {
  const name = opts.name ?? `${primary.name}-replica`;
  const dir = newServerDir(name);
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const applicationName = opts.applicationName ?? standbyName(name, primary.host, primary.port);
  await baseBackup({ host: primary.host, port: primary.port, applicationName }, dataDir);
  if (opts.settings) writeSettings(dataDir, opts.settings);
  const port = await startOnFreePort(dataDir, logFile);
  return { ...serverHandle({ name, dir, dataDir, port, logFile }), applicationName };
}

export interface ReplicatedOptions extends PostgresOptions {
  /** Standbys to start (default 1). */
  replicas?: number;
  /** Name them all in the primary's synchronous_standby_names (FIRST 1), default true. */
  synchronous?: boolean;
}

export interface ReplicatedPostgres {
  primary: PgServer;
  replicas: StandbyServer[];
  /** Every server, primary first. */
  all(): PgServer[];
  dispose(): Promise<void>;
}

/**
 * A primary with `replicas` streaming standbys, each caught up and (when synchronous) shown as
 * `sync` or `potential` in pg_stat_replication before this resolves.
 */
export async function startReplicatedPostgres(
  opts: ReplicatedOptions = {},
): Promise<ReplicatedPostgres> {
  const name = opts.name ?? 'primary';
  const primary = await startPostgres({
    ...opts,
    name,
    settings: { ...REPLICATION_SETTINGS, ...opts.settings },
  });
  const replicas: StandbyServer[] = [];
  try {
    for (let i = 0; i < (opts.replicas ?? 1); i++)
      replicas.push(await startReplica(primary, { name: `${name}-r${i + 1}` }));
    if (opts.synchronous ?? true) {
      await setSynchronousStandbys(
        primary,
        replicas.map((r) => r.applicationName),
      );
    }
    await waitForStreaming(primary, replicas, opts.synchronous ?? true);
  } catch (e) {
    await Promise.all([primary, ...replicas].map((s) => s.dispose()));
    throw e;
  }
  return {
    primary,
    replicas,
    all: () => [primary, ...replicas],
    dispose: async () => {
      await Promise.all([primary, ...replicas].map((s) => s.dispose()));
    },
  };
}

/** `FIRST 1 (a, b)` on `server` (ALTER SYSTEM + reload); an empty list turns waiting off. */
export async function setSynchronousStandbys(server: PgServer, names: string[]): Promise<void> {
  const value = names.length === 0 ? '' : `FIRST 1 (${names.join(', ')})`;
  await server.query(`alter system set synchronous_standby_names = '${value}'`);
  await server.query('select pg_reload_conf()');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [row] = await server.query<{ v: string }>(
      `select current_setting('synchronous_standby_names') as v`,
    );
    if (row?.v === value) return;
    if (Date.now() > deadline)
      throw new Error(`synchronous_standby_names did not become "${value}" on ${server.name}`);
    await sleep(20);
  }
}

/** Resolves once every standby streams from `primary` (and, when `sync`, one of them is sync). */
export async function waitForStreaming(
  primary: PgServer,
  standbys: readonly StandbyServer[],
  sync: boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await primary.query<{
      application_name: string;
      state: string;
      sync_state: string;
    }>('select application_name, state, sync_state from pg_stat_replication');
    const streaming = standbys.every((s) =>
      rows.some((r) => r.application_name === s.applicationName && r.state === 'streaming'),
    );
    if (streaming && (!sync || standbys.length === 0 || rows.some((r) => r.sync_state === 'sync')))
      return;
    if (Date.now() > deadline) {
      throw new Error(
        `standbys of ${primary.name} are not streaming after ${timeoutMs} ms: ${JSON.stringify(rows)}`,
      );
    }
    await sleep(50);
  }
}

/** SIGSTOP every process of the server (it freezes, connections stay open), or SIGCONT them. */
export function pauseServer(server: PgServer): number {
  return signalServer(server.dataDir, 'SIGSTOP');
}
export function resumeServer(server: PgServer): number {
  return signalServer(server.dataDir, 'SIGCONT');
}
