// The Tessera side of the matrix: a local cluster run by the real CLI (`tessera up --dir D`,
// `tessera down --dir D`), its keyspaces and tables declared with `tessera keyspace create` and
// `tessera table distribute|reference`, exactly as a user would.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { exec, mustExec } from './exec.js';
import type { Declarations } from './declarations.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
const CLI = join(REPO_ROOT, 'apps/cli/bin/tessera.js');

export interface NodeAddress {
  name: string;
  role: string;
  host: string;
  port: number;
  /** The superuser's password on the node (undefined: the cluster trusts every login). */
  password: string | undefined;
}

export interface TesseraCluster {
  dir: string;
  /** The connection line `tessera up` printed (role, password, router address). */
  routerUrl: URL;
  nodes: NodeAddress[];
  /** `tessera ARGS` against this cluster. */
  cli(args: readonly string[]): Promise<string>;
  /** The router's URL for one database. */
  url(database: string): string;
  /** Creates a database owned by the application role on every node (as their superuser). */
  createDatabase(name: string): Promise<void>;
  down(): Promise<void>;
}

export async function startTessera(log: (m: string) => void): Promise<TesseraCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-drivers-'));
  // mkdtemp makes it 0700; the servers run as the postgres OS user when we are root.
  chmodSync(dir, 0o755);
  const env = { TESSERA_HOME: dir };
  const cli = async (args: readonly string[]) =>
    (await mustExec(process.execPath, [CLI, ...args], { env, timeoutMs: 60_000 })).stdout;

  const up = await exec(process.execPath, [CLI, 'up', '--dir', dir], {
    env,
    timeoutMs: 180_000,
  });
  if (up.end !== 'ok') {
    await exec(process.execPath, [CLI, 'down', '--dir', dir], { env, timeoutMs: 90_000 });
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`tessera up failed (${up.end}):\n${up.stdout}${up.stderr}`);
  }
  const connect = /connect:\s+(postgres(?:ql)?:\/\/\S+)/.exec(up.stdout)?.[1];
  if (!connect) throw new Error(`tessera up printed no connection line:\n${up.stdout}`);
  const routerUrl = new URL(connect);
  // `tessera up` keeps the superuser's password there (absent: a cluster without passwords).
  const passwordsFile = join(dir, 'passwords.json');
  const superuserPassword = existsSync(passwordsFile)
    ? (JSON.parse(readFileSync(passwordsFile, 'utf8')) as { postgres: string }).postgres
    : undefined;
  const listed = JSON.parse(await cli(['status', '--json'])) as {
    nodes: Omit<NodeAddress, 'password'>[];
  };
  const status = { nodes: listed.nodes.map((n) => ({ ...n, password: superuserPassword })) };
  log(`tessera up in ${dir}: router ${routerUrl.host}, ${status.nodes.length} nodes`);

  return {
    dir,
    routerUrl,
    nodes: status.nodes,
    cli,
    url(database) {
      const u = new URL(routerUrl.href);
      u.pathname = `/${database}`;
      return u.href;
    },
    async createDatabase(name) {
      for (const n of status.nodes) {
        const c = new pg.Client({
          host: n.host,
          port: n.port,
          user: 'postgres',
          database: 'postgres',
          ...(n.password !== undefined ? { password: n.password } : {}),
        });
        await c.connect();
        try {
          await c.query(`drop database if exists ${name} with (force)`);
          await c.query(`create database ${name} owner ${routerUrl.username}`);
        } finally {
          await c.end();
        }
      }
    },
    async down() {
      const r = await exec(process.execPath, [CLI, 'down', '--dir', dir], {
        env,
        timeoutMs: 90_000,
      });
      if (r.end !== 'ok') log(`tessera down: ${r.end}\n${r.stderr}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Declares every keyspace and table the programs use, through the CLI, before they exist. */
export async function declare(t: TesseraCluster, d: Declarations): Promise<void> {
  // One CLI process per declaration, all at once: each is one catalog transaction.
  await Promise.all(
    d.keyspaces.map((k) =>
      t.cli(['keyspace', 'create', k.name, '--type', k.type, '--ranges', String(k.ranges)]),
    ),
  );
  await Promise.all(
    d.tables.map((tb) =>
      tb.kind === 'sharded'
        ? t.cli(['table', 'distribute', tb.name, '--column', tb.column, '--keyspace', tb.keyspace])
        : t.cli(['table', 'reference', tb.name]),
    ),
  );
}
