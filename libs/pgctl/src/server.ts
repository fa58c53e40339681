// Initialising a data directory and running one postgres server process on 127.0.0.1.
import { spawn, execFileSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  appendFileSync,
  cpSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findPgBinDir, serverOsUser, type OsUser } from './binaries.js';

/** Settings every Tessera node needs (DESIGN.md section 6), plus loopback-only listening. */
export const NODE_SETTINGS: Readonly<Record<string, string>> = {
  listen_addresses: "'127.0.0.1'",
  unix_socket_directories: "''",
  wal_level: 'logical',
  max_prepared_transactions: '64',
  max_wal_senders: '20',
  max_replication_slots: '20',
  max_connections: '300',
  // A move's replication slot may retain at most this much WAL: a stalled move cannot fill the
  // disk (the mover refuses to start a move on a node where this is unlimited).
  max_slot_wal_keep_size: "'4GB'",
};

/**
 * What a node with streaming replicas needs (set on the primary; base backups copy them): hints
 * and kept WAL so pg_rewind can bring a former primary back, standbys that report every second and
 * retry streaming every half second (a promotion is noticed only between retries).
 */
export const STREAMING_SETTINGS: Readonly<Record<string, string>> = {
  wal_log_hints: 'on',
  wal_keep_size: "'256MB'",
  wal_receiver_status_interval: '1s',
  wal_retrieve_retry_interval: "'500ms'",
  wal_sender_timeout: '10s',
  hot_standby: 'on',
};

/** Faster, non-durable settings for throwaway test servers. */
export const TEST_SETTINGS: Readonly<Record<string, string>> = {
  fsync: 'off',
  full_page_writes: 'off',
  synchronous_commit: 'off',
  shared_buffers: "'64MB'",
};

export interface InitOptions {
  binDir?: string;
  /** Settings written into postgresql.conf, on top of NODE_SETTINGS. */
  settings?: Record<string, string>;
  /**
   * The `postgres` superuser's password: TCP logins (all users, replication too) then need
   * scram-sha-256, local socket logins stay trust. Without it every login is trust.
   */
  superuserPassword?: string;
}

function chownTree(path: string, user: OsUser | undefined): void {
  if (!user) return;
  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, path]);
}

/** Runs initdb into `dataDir` (which must not exist yet or be empty) and writes the node settings. */
export function initDataDir(dataDir: string, opts: InitOptions = {}): void {
  const binDir = opts.binDir ?? findPgBinDir();
  const user = serverOsUser();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (user) chownSync(dataDir, user.uid, user.gid);
  const pwDir =
    opts.superuserPassword === undefined ? undefined : mkdtempSync(join(tmpdir(), 'tessera-pw-'));
  try {
    const auth = ['--auth=trust'];
    if (pwDir !== undefined && opts.superuserPassword !== undefined) {
      // initdb reads the password from a file (never argv); the server's OS user must read it.
      const pwFile = join(pwDir, 'pw');
      writeFileSync(pwFile, `${opts.superuserPassword}\n`, { mode: 0o600 });
      if (user) {
        chownSync(pwDir, user.uid, user.gid);
        chownSync(pwFile, user.uid, user.gid);
      }
      auth.splice(0, 1, '--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${pwFile}`);
    }
    execFileSync(
      join(binDir, 'initdb'),
      [
        '-D',
        dataDir,
        '-U',
        'postgres',
        ...auth,
        '--encoding=UTF8',
        '--locale=C.UTF-8',
        '--no-instructions',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv(), ...(user ?? {}) },
    );
  } finally {
    if (pwDir !== undefined) rmSync(pwDir, { recursive: true, force: true });
  }
  writeSettings(dataDir, { ...NODE_SETTINGS, ...opts.settings });
}

/**
 * The environment for a server process (and initdb): ours without libpq's PG* variables and
 * Tessera's own, since those may carry passwords (PGPASSWORD, TESSERA_NODE_PASSWORD, URLs with
 * one) that a server has no use for and must not hold.
 */
export function serverEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env))
    if (!k.startsWith('PG') && !k.startsWith('TESSERA_')) out[k] = v;
  return out;
}

/** Copies an initialised data directory (much faster than another initdb). */
export function cloneDataDir(
  templateDir: string,
  dataDir: string,
  settings?: Record<string, string>,
): void {
  cpSync(templateDir, dataDir, { recursive: true });
  chownTree(dataDir, serverOsUser());
  if (settings) writeSettings(dataDir, settings);
}

export function writeSettings(dataDir: string, settings: Record<string, string>): void {
  const lines = Object.entries(settings).map(([k, v]) => `${k} = ${v}`);
  appendFileSync(join(dataDir, 'postgresql.conf'), `\n# tessera\n${lines.join('\n')}\n`);
}

export interface StartOptions {
  binDir?: string;
  port: number;
  /** Server log file; when absent the log is discarded. */
  logFile?: string;
  /** Keep running after this process exits (tessera up). */
  detached?: boolean;
  /** How long to wait for it to accept connections: default 30 s, or TESSERA_PG_START_TIMEOUT_MS. */
  timeoutMs?: number;
  /**
   * Run the server inside this Linux network namespace (`ip netns add NAME`; needs root): it is
   * started through `nsenter --net=/run/netns/NAME`, which then becomes the server's own process.
   */
  netns?: string;
}

export class PostgresStartError extends Error {
  readonly code = 'PG_START_FAILED';
}

/** Reads postmaster.pid: [pid, dataDir, startTime, port, socketDir, listenAddr, shmKey, status]. */
export function readPostmasterPid(
  dataDir: string,
): { pid: number; port: number; status: string } | undefined {
  const file = join(dataDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, port: Number(lines[3]), status: (lines[7] ?? '').trim() };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A machine loaded far beyond its cores (the soak) may need longer than 30 s to start a server. */
function defaultStartTimeoutMs(): number {
  const v = Number(process.env.TESSERA_PG_START_TIMEOUT_MS);
  return Number.isInteger(v) && v > 0 ? v : 30_000;
}

/** Starts `postgres -D dataDir -p port` and resolves with its pid once it accepts connections. */
export async function startServer(dataDir: string, opts: StartOptions): Promise<number> {
  const binDir = opts.binDir ?? findPgBinDir();
  const user = serverOsUser();
  let out: number | 'ignore' = 'ignore';
  if (opts.logFile) {
    out = openSync(opts.logFile, 'a');
    if (user) chownSync(opts.logFile, user.uid, user.gid);
  }
  const postgres = [join(binDir, 'postgres'), '-D', dataDir, '-p', String(opts.port)];
  // nsenter joins the namespace as root, drops to the server's user and execs postgres in place,
  // so the child's pid is the postmaster's either way.
  const [command, ...args] =
    opts.netns === undefined
      ? postgres
      : [
          'nsenter',
          `--net=/run/netns/${opts.netns}`,
          ...(user ? [`--setgid=${user.gid}`, `--setuid=${user.uid}`] : []),
          '--',
          ...postgres,
        ];
  const child = spawn(command!, args, {
    stdio: ['ignore', out, out],
    env: serverEnv(),
    detached: opts.detached ?? false,
    ...(opts.netns === undefined ? (user ?? {}) : {}),
  });
  if (typeof out === 'number') closeSync(out);
  let exitCode: number | null | undefined;
  child.once('exit', (code, signal) => (exitCode = code ?? (signal ? -1 : 0)));
  child.once('error', () => (exitCode = -1));
  if (opts.detached) child.unref();
  const deadline = Date.now() + (opts.timeoutMs ?? defaultStartTimeoutMs());
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      const tail = opts.logFile
        ? readFileSync(opts.logFile, 'utf8').split('\n').slice(-8).join('\n')
        : '';
      throw new PostgresStartError(
        `postgres on port ${opts.port} exited during startup (code ${exitCode})\n${tail}`,
      );
    }
    const pm = readPostmasterPid(dataDir);
    if (pm && pm.pid === child.pid && pm.status === 'ready') return pm.pid;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new PostgresStartError(`postgres on port ${opts.port} did not become ready in time`);
}

export type StopMode = 'smart' | 'fast' | 'immediate' | 'kill';

const STOP_SIGNAL: Record<StopMode, NodeJS.Signals> = {
  smart: 'SIGTERM',
  fast: 'SIGINT',
  immediate: 'SIGQUIT',
  kill: 'SIGKILL',
};

/** Stops the server that owns `dataDir`, if any; escalates to SIGKILL after `timeoutMs`. */
export async function stopServer(
  dataDir: string,
  mode: StopMode = 'fast',
  timeoutMs = 15_000,
): Promise<void> {
  const pm = readPostmasterPid(dataDir);
  if (!pm || !isAlive(pm.pid)) return;
  // A killed postmaster leaves its backends attached to shared memory for a moment, which would
  // stop a restart on the same directory: kill them too.
  const children = mode === 'kill' ? childPids(pm.pid) : [];
  try {
    process.kill(pm.pid, STOP_SIGNAL[mode]);
  } catch {
    return;
  }
  for (const pid of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pm.pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pm.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      break;
    }
    await sleep(20);
  }
}

function childPids(parent: number): number[] {
  try {
    const out = execFileSync('pgrep', ['-P', String(parent)], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
