// Passwords on a `tessera up` cluster, end to end (--no-replicas): the router asks clients for
// SCRAM-SHA-256 and every node asks TCP logins for scram-sha-256; a wrong password fails with
// 28P01 through the router and directly on each node, the right one works through node-postgres,
// postgres.js and psycopg 3; the passwords stay in a 0600 file that the next `up` reuses and that
// no server process holds. `up --trust` keeps passwordless logins, as do clusters made before.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import postgres from 'postgres';
import { readPostmasterPid } from '@tessera/pgctl';
import { LOCAL_NODES, layout, readClusterFile, type ClusterFile } from './layout.js';
import { runCli, testEnv } from './run-cli.testutil.js';
import type { ClusterPasswords } from './passwords.js';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';

let root: string;
const tessera = (...argv: string[]) => runCli(root, ...argv);

before(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-up-auth-'));
  // The servers run as `postgres` when we are root: it must be able to walk into the directory.
  chmodSync(root, 0o755);
});

after(async () => {
  for (const d of ['scram', 'trust']) await tessera('down', '--dir', join(root, d));
  rmSync(root, { recursive: true, force: true });
});

interface Login {
  port: number;
  user: string;
  password?: string;
  database?: string;
}

/** Logs in with node-postgres and runs `select current_user`; rejects with the server's error. */
async function whoAmI(l: Login): Promise<string> {
  const c = new pg.Client({
    host: '127.0.0.1',
    port: l.port,
    user: l.user,
    database: l.database ?? (l.user === 'app' ? 'app' : 'postgres'),
    connectionTimeoutMillis: 10_000,
    ...(l.password !== undefined ? { password: l.password } : {}),
  });
  try {
    await c.connect();
    const { rows } = await c.query<{ u: string }>('select current_user as u');
    return rows[0]!.u;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function rejectsWith28P01(l: Login, where: string): Promise<void> {
  await assert.rejects(
    whoAmI(l),
    (e: unknown) => (e as { code?: string }).code === '28P01',
    `${l.user} with a wrong password on ${where}`,
  );
}

/** Whether psycopg 3 imports in the system Python; the reason it does not, otherwise. */
async function psycopgMissing(): Promise<string | undefined> {
  try {
    await run(PYTHON, ['-c', 'import psycopg'], { timeout: 20_000 });
    return undefined;
  } catch (e) {
    return `psycopg 3 is not importable by ${PYTHON}: ${(e as Error).message.split('\n')[0]}`;
  }
}

describe('a cluster with passwords (the default)', () => {
  let dir: string;
  let cluster: ClusterFile;
  let pw: ClusterPasswords;
  const nodePorts = () => LOCAL_NODES.map((n) => [n.name, cluster.nodePorts[n.name]] as const);

  before(async () => {
    dir = join(root, 'scram');
    const r = await tessera('up', '--dir', dir, '--no-replicas');
    assert.equal(r.code, 0, r.err);
    cluster = readClusterFile(layout(dir))!;
    pw = JSON.parse(readFileSync(layout(dir).passwordsFile, 'utf8')) as ClusterPasswords;
    // The connection line carries app's generated password; the superuser's is printed beside it.
    assert.match(
      r.out,
      new RegExp(`connect: +postgresql://app:${pw.app}@127\\.0\\.0\\.1:${cluster.routerPort}/app`),
    );
    assert.match(r.out, new RegExp(`superuser: +postgres, password ${pw.postgres} `));
  });

  test('the passwords file is 0600 and holds two different generated passwords', () => {
    assert.equal(cluster.auth, 'scram');
    assert.equal(statSync(layout(dir).passwordsFile).mode & 0o777, 0o600);
    assert.match(pw.postgres, /^[A-Za-z0-9_-]{24}$/);
    assert.match(pw.app, /^[A-Za-z0-9_-]{24}$/);
    assert.notEqual(pw.postgres, pw.app);
  });

  test('a wrong password fails with 28P01 through the router and on every node', async () => {
    for (const user of ['app', 'postgres']) {
      await rejectsWith28P01({ port: cluster.routerPort, user, password: 'wrong' }, 'the router');
      for (const [name, port] of nodePorts())
        await rejectsWith28P01({ port, user, password: 'wrong' }, `node ${name}`);
    }
  });

  test('the right passwords work through the router and on every node', async () => {
    assert.equal(await whoAmI({ port: cluster.routerPort, user: 'app', password: pw.app }), 'app');
    assert.equal(
      await whoAmI({ port: cluster.routerPort, user: 'postgres', password: pw.postgres }),
      'postgres',
    );
    for (const [, port] of nodePorts()) {
      assert.equal(await whoAmI({ port, user: 'app', password: pw.app }), 'app');
      assert.equal(await whoAmI({ port, user: 'postgres', password: pw.postgres }), 'postgres');
    }
  });

  test('node-postgres reads sharded rows through the router as app', async () => {
    const c = new pg.Client({
      connectionString: `postgresql://app:${pw.app}@127.0.0.1:${cluster.routerPort}/app`,
    });
    await c.connect();
    try {
      // Every data node answers, each logged in to as app with the client's own SCRAM key.
      const { rows } = await c.query<{ n: number }>('select count(*)::int as n from orders');
      assert.ok(rows[0]!.n > 0);
    } finally {
      await c.end();
    }
  });

  test('postgres.js logs in through the router and reads', async () => {
    const sql = postgres({
      host: '127.0.0.1',
      port: cluster.routerPort,
      database: 'app',
      user: 'app',
      password: pw.app,
      max: 1,
      onnotice: () => undefined,
    });
    try {
      const rows = await sql<{ n: number }[]>`select count(*)::int as n from tenants`;
      assert.ok(rows[0]!.n > 0);
      await assert.rejects(
        postgres({
          host: '127.0.0.1',
          port: cluster.routerPort,
          database: 'app',
          user: 'app',
          password: 'wrong',
          max: 1,
        })`select 1`,
        (e: unknown) => (e as { code?: string }).code === '28P01',
      );
    } finally {
      await sql.end();
    }
  });

  test('psycopg 3 logs in through the router; a wrong password fails with 28P01', async (t) => {
    const missing = await psycopgMissing();
    if (missing) return t.skip(missing);
    // autocommit: psycopg opens a transaction otherwise, and a read across nodes inside one is 0A000.
    const script = [
      'import os, psycopg',
      'def attempt(pw):',
      '    try:',
      "        with psycopg.connect(host='127.0.0.1', port=os.environ['PORT'], dbname='app', user='app', password=pw, connect_timeout=10, autocommit=True) as c:",
      "            return str(c.execute('select count(*) from tenants').fetchone()[0])",
      '    except psycopg.Error as e:',
      "        return 'error ' + str(e.sqlstate) + ' ' + str(e).strip().splitlines()[-1]",
      "print(attempt(os.environ['RIGHT']))",
      "print(attempt('wrong'))",
    ].join('\n');
    const { stdout } = await run(PYTHON, ['-c', script], {
      env: { ...testEnv(), PORT: String(cluster.routerPort), RIGHT: pw.app },
      timeout: 60_000,
    });
    const [right, wrong] = stdout.trim().split('\n');
    assert.match(right ?? '', /^[1-9]\d*$/, stdout);
    // libpq keeps no SQLSTATE for an error at connect (psycopg says None): the message is 28P01's.
    assert.match(
      wrong ?? '',
      /^error (28P01|None) .*password authentication failed for user "app"$/,
    );
  });

  test('no Postgres server process holds a password in its environment', () => {
    for (const [name] of nodePorts()) {
      const pm = readPostmasterPid(layout(dir).nodeDataDir(name));
      assert.ok(pm, `node ${name} runs`);
      const environ = readFileSync(`/proc/${pm.pid}/environ`, 'utf8');
      assert.ok(!environ.includes(pw.postgres), `node ${name}: the superuser's password`);
      assert.ok(!environ.includes(pw.app), `node ${name}: app's password`);
      assert.doesNotMatch(environ, /(^|\0)(PGPASSWORD|TESSERA_[A-Z_]*)=/);
    }
  });

  test('the next up of the same directory reuses the passwords', { timeout: 120_000 }, async () => {
    assert.equal((await tessera('down', '--dir', dir)).code, 0);
    const r = await tessera('up', '--dir', dir);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`postgresql://app:${pw.app}@`));
    assert.deepEqual(JSON.parse(readFileSync(layout(dir).passwordsFile, 'utf8')), pw);
    assert.equal(await whoAmI({ port: cluster.routerPort, user: 'app', password: pw.app }), 'app');
    await tessera('down', '--dir', dir);
  });

  test('a lost passwords file is a one-sentence error saying what to do', async () => {
    const file = layout(dir).passwordsFile;
    rmSync(file);
    try {
      const r = await tessera('up', '--dir', dir);
      assert.notEqual(r.code, 0);
      assert.match(r.err, /passwords\.json is missing.*put it back, or start a new cluster/);
    } finally {
      writeFileSync(file, JSON.stringify(pw), { mode: 0o600 });
    }
  });
});

describe('a cluster without passwords', () => {
  let dir: string;
  let cluster: ClusterFile;

  test('up --trust lets every login in without a password', { timeout: 120_000 }, async () => {
    dir = join(root, 'trust');
    const r = await tessera('up', '--dir', dir, '--no-replicas', '--trust');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /postgresql:\/\/app:app@127\.0\.0\.1:\d+\/app/);
    assert.match(r.out, /auth: +trust/);
    cluster = readClusterFile(layout(dir))!;
    assert.equal(cluster.auth, 'trust');
    assert.throws(() => statSync(layout(dir).passwordsFile), { code: 'ENOENT' });
    assert.equal(await whoAmI({ port: cluster.routerPort, user: 'postgres' }), 'postgres');
    for (const n of LOCAL_NODES)
      assert.equal(await whoAmI({ port: cluster.nodePorts[n.name], user: 'app' }), 'app');
  });

  test('a cluster made before passwords (no `auth` in cluster.json) comes up as trust', async () => {
    assert.equal((await tessera('down', '--dir', dir)).code, 0);
    const file = layout(dir).clusterFile;
    const { auth: _auth, ...before } = JSON.parse(readFileSync(file, 'utf8')) as ClusterFile;
    writeFileSync(file, JSON.stringify(before, null, 2));
    const r = await tessera('up', '--dir', dir);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /was made without passwords .* and stays so/);
    assert.equal(await whoAmI({ port: cluster.routerPort, user: 'app' }), 'app');
  });
});
