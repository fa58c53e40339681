// Streaming replication with the stock tools: a standby made by `pg_basebackup -R`, a former
// primary turned into a standby by `pg_rewind -R`, and the processes of a running server (for
// fencing: a stopped or frozen postmaster must be killed with everything it started).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, chownSync, readdirSync, rmSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findPgBinDir, serverOsUser } from './binaries.js';
import { readPostmasterPid } from './server.js';

const run = promisify(execFile);

/** Where a standby streams from, and the name it streams under (its application_name). */
export interface PrimaryConn {
  host: string;
  port: number;
  user?: string;
  password?: string;
  /** Appears as application_name in the primary's pg_stat_replication and synchronous_standby_names. */
  applicationName: string;
}

export class ReplicationToolError extends Error {
  readonly code = 'PG_REPLICATION_TOOL_FAILED';
}

/** A libpq keyword/value connection string (values quoted as libpq wants). */
export function conninfo(c: PrimaryConn, extra: Record<string, string> = {}): string {
  const pairs: Record<string, string> = {
    host: c.host,
    port: String(c.port),
    user: c.user ?? 'postgres',
    application_name: c.applicationName,
    ...(c.password !== undefined ? { password: c.password } : {}),
    ...extra,
  };
  return Object.entries(pairs)
    .map(([k, v]) => `${k}='${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`)
    .join(' ');
}

/**
 * A standby application_name from a node name and an address: lower case letters, digits and _
 * only, so it needs no quoting in synchronous_standby_names.
 */
export function standbyName(node: string, host: string, port: number): string {
  return `${node}_${host}_${port}`
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 63);
}

async function tool(
  binDir: string,
  name: string,
  args: string[],
  timeoutMs: number,
  password: string | undefined,
) {
  const user = serverOsUser();
  // The password goes in the tool's environment, not its argv (which every local user may read
  // with ps); -R still writes it into primary_conninfo, where the standby needs it.
  const env: NodeJS.ProcessEnv = { ...process.env, PGCONNECT_TIMEOUT: '10' };
  if (password !== undefined) env['PGPASSWORD'] = password;
  else delete env['PGPASSWORD'];
  try {
    return await run(join(binDir, name), args, {
      timeout: timeoutMs,
      env,
      ...(user ?? {}),
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new ReplicationToolError(
      `${name} failed: ${(err.stderr ?? '').trim() || err.message}`.slice(0, 2000),
    );
  }
}

function withoutPassword(c: PrimaryConn): PrimaryConn {
  const { password: _password, ...rest } = c;
  return rest;
}

export interface BaseBackupOptions {
  binDir?: string;
  timeoutMs?: number;
}

/**
 * `pg_basebackup -R -X stream -c fast` of `primary` into `dataDir` (created, or emptied first), so
 * the copy starts as a standby streaming under `primary.applicationName`.
 */
export async function baseBackup(
  primary: PrimaryConn,
  dataDir: string,
  opts: BaseBackupOptions = {},
): Promise<void> {
  const binDir = opts.binDir ?? findPgBinDir();
  emptyDir(dataDir);
  await tool(
    binDir,
    'pg_basebackup',
    ['-D', dataDir, '-R', '-X', 'stream', '-c', 'fast', '-d', conninfo(withoutPassword(primary))],
    opts.timeoutMs ?? 600_000,
    primary.password,
  );
}

/**
 * `pg_rewind -R` of the (stopped) server in `dataDir` onto `primary`: what a former primary needs to
 * stream from the replica promoted in its place. Resolves with what pg_rewind printed (it may be
 * "no rewind required"); throws ReplicationToolError when rewinding is impossible (then a fresh
 * base backup is the way back).
 */
export async function rewind(
  primary: PrimaryConn,
  dataDir: string,
  opts: BaseBackupOptions = {},
): Promise<string> {
  const binDir = opts.binDir ?? findPgBinDir();
  const { stdout, stderr } = await tool(
    binDir,
    'pg_rewind',
    [
      '-D',
      dataDir,
      '-R',
      '--source-server',
      conninfo(withoutPassword(primary), { dbname: 'postgres' }),
    ],
    opts.timeoutMs ?? 600_000,
    primary.password,
  );
  return `${stdout}${stderr}`.trim();
}

/** Makes `dir` an empty directory owned by the server's OS user, mode 0700. */
export function emptyDir(dir: string): void {
  if (existsSync(dir)) {
    for (const entry of readdirSync(dir))
      rmSync(join(dir, entry), { recursive: true, force: true });
  } else {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  const user = serverOsUser();
  if (user) chownSync(dir, user.uid, user.gid);
}

/** The postmaster of `dataDir` and every process it started (children first, postmaster last). */
export function serverProcesses(dataDir: string): number[] {
  const pm = readPostmasterPid(dataDir);
  if (!pm) return [];
  return [...childrenOf(pm.pid), pm.pid];
}

function childrenOf(parent: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Sends `signal` to every process of the server in `dataDir`; returns how many it reached. */
export function signalServer(dataDir: string, signal: NodeJS.Signals): number {
  let n = 0;
  for (const pid of serverProcesses(dataDir)) {
    try {
      process.kill(pid, signal);
      n++;
    } catch {
      // gone
    }
  }
  return n;
}
