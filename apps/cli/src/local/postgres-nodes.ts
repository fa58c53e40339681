// The local cluster's Postgres servers: making sure the `postgres` OS user can reach them,
// initialising their data directories once, and starting and stopping them.
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import {
  STREAMING_SETTINGS,
  baseBackup,
  cloneDataDir,
  initDataDir,
  isAlive,
  readPostmasterPid,
  serverOsUser,
  standbyName,
  startServer,
  stopServer,
  type OsUser,
} from '@tessera/pgctl';
import { CliError } from '../errors.js';
import { CATALOG_DATABASE, LOCAL_NODES, type LocalInstance, type Layout } from './layout.js';

/** Written into a data directory by its agent when it fences a former primary (apps/agent). */
const FENCE_MARKER = 'tessera-fenced';

/** Log file of a node's server, beside the services' logs. */
export const nodeLogName = (node: string): string => `postgres-${node}`;

/** Whether `user` may pass through directory `path` (the x bit for owner, group or others). */
function traversable(path: string, user: OsUser): boolean {
  const st = statSync(path);
  if (st.uid === user.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === user.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/**
 * When we are root the servers run as `postgres`, which must be able to walk down to the data
 * directories: every existing directory from / to D must be traversable by it. Refuses with the
 * fix rather than letting initdb or the server fail with a permission error in a log.
 */
export function checkServerUserCanReach(dir: string): void {
  const user = serverOsUser();
  if (!user) return;
  for (let p = dir; ; p = dirname(p)) {
    if (existsSync(p) && !traversable(p, user)) {
      throw new CliError(
        `the postgres OS user (which runs the servers, since we are root) cannot reach ${dir}: ` +
          `${p} is not traversable by it; fix with \`chmod o+x ${p}\` or use a directory it can reach ` +
          `(tessera up --dir /tmp/tessera, or TESSERA_HOME)`,
      );
    }
    if (p === dirname(p)) break;
  }
}

const hasData = (dataDir: string): boolean => existsSync(join(dataDir, 'PG_VERSION'));

/**
 * Creates the data directories that do not exist yet. The first is made by initdb and the others
 * are copies of it made before it ever starts (a copy is much faster than another initdb).
 * Returns the names of the nodes it created.
 */
export function initNodes(
  l: Layout,
  binDir: string,
  replicated = false,
  superuserPassword?: string,
): string[] {
  mkdirSync(l.nodesDir, { recursive: true, mode: 0o755 });
  const missing = LOCAL_NODES.filter((n) => !hasData(l.nodeDataDir(n.name)));
  let template: string | undefined;
  for (const n of missing) {
    const dataDir = l.nodeDataDir(n.name);
    // A directory without PG_VERSION is what an interrupted initdb leaves: start it over.
    rmSync(dataDir, { recursive: true, force: true });
    if (template) cloneDataDir(template, dataDir);
    else {
      // With replicas: what streaming, pg_rewind and quick promotions need (copied by base backups).
      // With a password: TCP logins need scram-sha-256 (there are no socket logins: the nodes
      // listen on 127.0.0.1 only). The copies share the superuser's verifier, as SCRAM
      // pass-through through the router needs.
      initDataDir(dataDir, {
        binDir,
        ...(replicated ? { settings: { ...STREAMING_SETTINGS } } : {}),
        ...(superuserPassword !== undefined ? { superuserPassword } : {}),
      });
      template = dataDir;
    }
  }
  return missing.map((n) => n.name);
}

/**
 * Makes the replica of `inst.node` that does not exist yet: a base backup (pg_basebackup -R) of
 * the node's first server, streaming under the application_name the catalog derives for it.
 * Returns false when it existed already.
 */
export async function createReplica(
  l: Layout,
  inst: LocalInstance,
  primaryPort: number,
  binDir: string,
  superuserPassword?: string,
): Promise<boolean> {
  const dataDir = l.nodeDataDir(inst.dir);
  if (hasData(dataDir)) return false;
  await baseBackup(
    {
      host: '127.0.0.1',
      port: primaryPort,
      applicationName: standbyName(inst.node, '127.0.0.1', inst.port),
      ...(superuserPassword !== undefined ? { password: superuserPassword } : {}),
    },
    dataDir,
    { binDir },
  );
  return true;
}

/** A former primary its agent fenced: it stays down until `tessera nodes rejoin`. */
export function isFenced(l: Layout, name: string): boolean {
  return existsSync(join(l.nodeDataDir(name), FENCE_MARKER));
}

/** Whether the node's server is running, and its pid if so. */
export function runningNodePid(l: Layout, name: string): number | undefined {
  const pm = readPostmasterPid(l.nodeDataDir(name));
  return pm && isAlive(pm.pid) ? pm.pid : undefined;
}

/** Starts a node's server unless it already runs (then adopts it); resolves with its pid. */
export async function startNode(
  l: Layout,
  name: string,
  port: number,
  binDir: string,
): Promise<number> {
  const running = runningNodePid(l, name);
  if (running !== undefined) return running;
  return startServer(l.nodeDataDir(name), {
    binDir,
    port,
    logFile: l.logFile(nodeLogName(name)),
    detached: true,
  });
}

/** Fast shutdown of every instance that runs (in parallel); resolves when they are gone. */
export async function stopNodes(l: Layout): Promise<string[]> {
  const names = LOCAL_NODES.flatMap((n) => [n.name, `${n.name}-replica`]);
  const running = names.filter((name) => runningNodePid(l, name) !== undefined);
  await Promise.all(running.map((name) => stopServer(l.nodeDataDir(name), 'fast', 20_000)));
  return running;
}

/** The superuser's URL for a node (with its password, if it has one: for a child's environment). */
export function superuserUrl(port: number, database = 'postgres', password?: string): string {
  const login = password === undefined ? 'postgres' : `postgres:${encodeURIComponent(password)}`;
  return `postgresql://${login}@127.0.0.1:${port}/${database}`;
}

/** Runs `fn` with a superuser connection to one node's database (no password: a trust cluster). */
export async function withNode<T>(
  port: number,
  database: string,
  password: string | undefined,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: superuserUrl(port, database, password) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates the coordinator's catalog database on the home node if it is not there yet, on
 * whichever of its servers is the primary (after a failover it is the replica's).
 */
export async function ensureCatalogDatabase(
  homePorts: readonly number[],
  password: string | undefined,
): Promise<void> {
  let last: unknown;
  for (const port of homePorts) {
    try {
      const done = await withNode(port, 'postgres', password, async (c) => {
        const { rows } = await c.query<{ r: boolean }>('select pg_is_in_recovery() as r');
        if (rows[0]?.r) return false;
        const found = await c.query('select 1 from pg_database where datname = $1', [
          CATALOG_DATABASE,
        ]);
        if (found.rowCount === 0) await c.query(`create database ${CATALOG_DATABASE}`);
        return true;
      });
      if (done) return;
    } catch (e) {
      last = e;
    }
  }
  throw last instanceof Error ? last : new Error('no server of the home node is a running primary');
}
