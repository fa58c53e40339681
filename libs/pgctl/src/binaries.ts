// Finding the local PostgreSQL server binaries, and the OS user that runs them.
import { existsSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export class PgBinariesNotFound extends Error {
  readonly code = 'PG_BINARIES_NOT_FOUND';
  constructor() {
    super(
      'PostgreSQL server binaries (initdb, postgres) were not found. Install them with ' +
        '`apt-get install postgresql-15` (Debian/Ubuntu), or point TESSERA_PG_BIN at the directory ' +
        'that holds initdb and postgres.',
    );
  }
}

/** The directory holding initdb/postgres: TESSERA_PG_BIN, else the newest /usr/lib/postgresql/N/bin, else `pg_config --bindir`. */
export function findPgBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const candidates: string[] = [];
  if (env.TESSERA_PG_BIN) candidates.push(env.TESSERA_PG_BIN);
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(base, v, 'bin'));
  }
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim());
  } catch {
    // no pg_config on PATH
  }
  for (const dir of candidates) {
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  }
  throw new PgBinariesNotFound();
}

export interface OsUser {
  uid: number;
  gid: number;
}

/**
 * Postgres refuses to run as root, so when we are root the server runs as the `postgres` OS user.
 * Returns undefined when we are not root (the server runs as ourselves).
 */
export function serverOsUser(): OsUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(
      'running as root, but there is no `postgres` OS user to run the server as; create one ' +
        '(`useradd --system postgres`) or run as an ordinary user',
    );
  }
}
