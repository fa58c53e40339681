// PgBouncer in front of one Postgres: Debian's package, installed with apt when missing and we
// may (root, apt works), run as the `postgres` OS user when we are root (it refuses root), with
// trust auth and its ini and userlist in a temp directory; in session or transaction mode.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, serverOsUser } from '@tessera/pgctl';
import { runProcess, startProcess, tempDir } from '../harness/processes.js';
import { answersQueries, skipped, type TargetStart } from './target.js';

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];

export function findPgbouncer(): string | undefined {
  for (const p of CANDIDATES) if (existsSync(p)) return p;
  try {
    return (
      execFileSync('which', ['pgbouncer'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

/** The binary, installing Debian's package if allowed; or the reason there is none. */
export async function ensurePgbouncer(
  allowInstall: boolean,
): Promise<{ bin: string } | { reason: string }> {
  const found = findPgbouncer();
  if (found) return { bin: found };
  if (!allowInstall)
    return { reason: 'pgbouncer is not installed (install it with `apt-get install pgbouncer`)' };
  if (process.getuid?.() !== 0) {
    return {
      reason:
        'pgbouncer is not installed and installing it needs root: run `sudo apt-get install pgbouncer`',
    };
  }
  process.stdout.write('pgbouncer is missing: apt-get install -y pgbouncer ...\n');
  const r = await runProcess('apt-get', ['install', '-y', '--no-install-recommends', 'pgbouncer'], {
    timeoutMs: 300_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const bin = findPgbouncer();
  if (r.code !== 0 || !bin) {
    const why = (r.stderr || r.stdout).trim().split('\n').slice(-2).join(' ');
    return { reason: `pgbouncer is not installed and apt-get install failed: ${why}` };
  }
  return { bin };
}

export interface PgbouncerOptions {
  /** Its name in tables (default `pgbouncer`): a suite may run it in both pool modes. */
  name?: string;
  bin: string;
  upstreamHost: string;
  upstreamPort: number;
  /** Clients it must accept at once. */
  maxClients: number;
  /**
   * Server connections per (database, user): session mode needs one per active client;
   * transaction mode shares them between clients, a transaction at a time.
   */
  poolSize: number;
  poolMode?: 'session' | 'transaction';
}

export async function startPgbouncer(opts: PgbouncerOptions): Promise<TargetStart> {
  const name = opts.name ?? 'pgbouncer';
  const tmp = tempDir('pgbouncer');
  const dir = tmp.path;
  const user = serverOsUser();
  const port = await freePort();
  const mode = opts.poolMode ?? 'session';
  const ini = `[databases]
* = host=${opts.upstreamHost} port=${opts.upstreamPort}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, 'userlist.txt')}
pool_mode = ${mode}
max_client_conn = ${opts.maxClients + 20}
default_pool_size = ${opts.poolSize}
max_db_connections = 0
logfile = ${join(dir, 'pgbouncer.log')}
log_connections = 0
log_disconnections = 0
log_pooler_errors = 1
ignore_startup_parameters = extra_float_digits
`;
  writeFileSync(join(dir, 'pgbouncer.ini'), ini);
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  if (user) {
    for (const f of ['', 'pgbouncer.ini', 'userlist.txt'])
      chownSync(join(dir, f), user.uid, user.gid);
  }
  const proc = startProcess(
    opts.bin,
    [join(dir, 'pgbouncer.ini')],
    user ? { uid: user.uid, gid: user.gid } : {},
  );
  const cleanup = async () => {
    await proc.stop();
    tmp.dispose();
  };
  if (!(await answersQueries('127.0.0.1', port, 15_000, () => proc.child.exitCode === null))) {
    const out = proc.output().trim().slice(-300);
    await cleanup();
    return skipped(name, `pgbouncer did not start: ${out || 'no output'}`);
  }
  return {
    ok: true,
    target: {
      name,
      host: '127.0.0.1',
      port,
      pid: proc.pid,
      detail: `${opts.bin}, pool_mode=${mode}, default_pool_size=${opts.poolSize}`,
      stop: cleanup,
    },
  };
}
