// Real, throwaway PostgreSQL servers for tests, benches and soak runs: each in its own temp
// directory on a random free port, removed when stopped, at exit, or by the next run if this
// process died without cleaning up.
import {
  mkdirSync,
  rmSync,
  writeFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  appendFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import pg from 'pg';
import {
  cloneDataDir,
  findPgBinDir,
  freePort,
  initDataDir,
  isAlive,
  readPostmasterPid,
  serverOsUser,
  startServer,
  stopServer,
  NODE_SETTINGS,
  TEST_SETTINGS,
  type StopMode,
} from '@tessera/pgctl';

const ROOT = join(tmpdir(), 'tessera-testkit');

export interface PostgresOptions {
  /** A label for logs and the directory name. */
  name?: string;
  /** Extra postgresql.conf settings. */
  settings?: Record<string, string>;
  /**
   * The address the server listens on and clients connect to (listen_addresses); default
   * 127.0.0.1. Settings may still widen listen_addresses.
   */
  host?: string;
  /** A fixed port (e.g. inside a network namespace of its own); default a free one. */
  port?: number;
  /** Run the server inside this Linux network namespace (root only; see pgctl's StartOptions). */
  netns?: string;
  /**
   * Extra pg_hba.conf lines, e.g. `host all all 10.213.0.0/16 trust` for a test network (the
   * template trusts only local and loopback connections).
   */
  hba?: string[];
}

export interface PgServer {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** postgresql://postgres@127.0.0.1:PORT/DB */
  url(database?: string, user?: string): string;
  /** Runs one statement on a fresh connection (database `postgres` unless given). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params?: unknown[],
    database?: string,
  ): Promise<R[]>;
  /** A connected client the caller must end(). */
  connect(database?: string): Promise<pg.Client>;
  /** Stops the server (default fast shutdown); the data directory stays until dispose(). */
  stop(mode?: StopMode): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops the server and removes its data directory. */
  dispose(): Promise<void>;
}

const live = new Set<string>();
let exitHookInstalled = false;
let swept = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous by necessity: stop every server this process started and remove its directory.
  process.once('exit', () => {
    for (const dir of live) {
      const pm = readPostmasterPid(join(dir, 'data'));
      if (pm && isAlive(pm.pid)) {
        try {
          process.kill(pm.pid, 'SIGQUIT');
        } catch {
          // gone
        }
      }
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // best effort; the next run's sweep finishes the job
      }
    }
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => process.exit(130));
  }
}

/** Removes servers left behind by test processes that died (their owner pid no longer runs). */
function sweepOrphans(): void {
  if (swept || !existsSync(ROOT)) return;
  swept = true;
  for (const entry of readdirSync(ROOT)) {
    const owner = Number(entry.split('-')[0]);
    if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue;
    const dir = join(ROOT, entry);
    const pm = readPostmasterPid(join(dir, 'data'));
    if (pm && isAlive(pm.pid)) {
      try {
        process.kill(pm.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One initdb per machine and Postgres version; every server starts from a copy of it. */
function templateDir(): string {
  const binDir = findPgBinDir();
  const version = execFileSync(join(binDir, 'postgres'), ['--version'], {
    encoding: 'utf8',
  }).trim();
  const key = /\d+(\.\d+)?/.exec(version)?.[0] ?? 'pg';
  // The settings are part of the key, so changing NODE_SETTINGS or TEST_SETTINGS makes a new one.
  const settings = createHash('sha256')
    .update(JSON.stringify([NODE_SETTINGS, TEST_SETTINGS]))
    .digest('hex')
    .slice(0, 8);
  const dir = join(ROOT, `template-${key}-${settings}`);
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  mkdirSync(ROOT, { recursive: true, mode: 0o755 });
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  initDataDir(tmp, { binDir, settings: TEST_SETTINGS });
  try {
    renameSync(tmp, dir);
  } catch {
    // another process won the race; use theirs
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

let counter = 0;

/** Starts a real Postgres server for a test. Always `dispose()` it (an exit hook is the backstop). */
export async function startPostgres(opts: PostgresOptions = {}): Promise<PgServer> {
  const template = templateDir();
  const name = opts.name ?? `pg${counter}`;
  const dir = newServerDir(name);
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const host = opts.host ?? '127.0.0.1';
  cloneDataDir(template, dataDir, { listen_addresses: `'${host}'`, ...opts.settings });
  if (opts.hba && opts.hba.length > 0)
    appendFileSync(join(dataDir, 'pg_hba.conf'), `\n# tessera test kit\n${opts.hba.join('\n')}\n`);
  const where = { port: opts.port, netns: opts.netns };
  const port = await startOnFreePort(dataDir, logFile, where);
  return serverHandle({ name, dir, dataDir, port, logFile, host, netns: opts.netns });
}

/**
 * Starts the server of `dataDir` (logging to `logFile`) on `where.port`, or on a free port when
 * none is given, inside network namespace `where.netns` if set; resolves with the port.
 */
export async function startOnFreePort(
  dataDir: string,
  logFile: string,
  where: { port?: number | undefined; netns?: string | undefined } = {},
): Promise<number> {
  writeFileSync(logFile, '');
  const user = serverOsUser();
  if (user) execFileSync('chown', [`${user.uid}:${user.gid}`, logFile]);
  const netns = where.netns === undefined ? {} : { netns: where.netns };
  for (let attempt = 0; ; attempt++) {
    const port = where.port ?? (await freePort());
    try {
      await startServer(dataDir, { port, logFile, ...netns });
      return port;
    } catch (e) {
      // Another process may have taken the port between freePort() and bind; try another.
      const log = readFileSync(logFile, 'utf8');
      if (
        where.port === undefined &&
        attempt < 5 &&
        /could not bind|Address already in use/.test(log)
      )
        continue;
      throw e;
    }
  }
}

/** Where one throwaway server lives: its directory (removed by dispose), data, address and log. */
export interface ServerPlace {
  name: string;
  dir: string;
  dataDir: string;
  port: number;
  logFile: string;
  /** Listen address; 127.0.0.1 unless given. */
  host?: string | undefined;
  /** Network namespace the server runs in, if any. */
  netns?: string | undefined;
}

/** A new directory under the kit's root for a server named `name`, registered for cleanup. */
export function newServerDir(name: string): string {
  installExitHook();
  sweepOrphans();
  const dir = join(ROOT, `${process.pid}-${counter++}-${name.replace(/[^a-zA-Z0-9_]/g, '')}`);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  live.add(dir);
  return dir;
}

/** The PgServer for a server already running at `place` (dispose stops it and removes `dir`). */
export function serverHandle(place: ServerPlace): PgServer {
  const { name, dir, dataDir, port, logFile } = place;
  const host = place.host ?? '127.0.0.1';
  const netns = place.netns === undefined ? {} : { netns: place.netns };
  const url = (database = 'postgres', user = 'postgres') =>
    `postgresql://${user}@${host}:${port}/${database}`;
  const server: PgServer = {
    name,
    host,
    port,
    dataDir,
    url,
    async connect(database = 'postgres') {
      const client = new pg.Client({ connectionString: url(database) });
      await client.connect();
      return client;
    },
    async query(sql, params, database) {
      const client = await server.connect(database);
      try {
        return (await client.query(sql, params)).rows;
      } finally {
        await client.end();
      }
    },
    async stop(mode = 'fast') {
      await stopServer(dataDir, mode);
    },
    async start() {
      await startServer(dataDir, { port, logFile, ...netns });
    },
    async dispose() {
      await stopServer(dataDir, 'immediate');
      rmSync(dir, { recursive: true, force: true });
      live.delete(dir);
    },
  };
  return server;
}

/** Starts `n` servers in parallel. */
export async function startPostgresCluster(
  n: number,
  opts: PostgresOptions = {},
): Promise<PgServer[]> {
  const base = opts.name ?? 'node';
  return Promise.all(
    Array.from({ length: n }, (_, i) => startPostgres({ ...opts, name: `${base}${i}` })),
  );
}
