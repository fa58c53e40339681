// TLS for clients: with a certificate configured, SSLRequest gets 'S' and the connection goes on
// encrypted (pg, psql sslmode=require, postgres.js); plain connections still work unless
// --tls-required; SCRAM runs over TLS; bytes pipelined after SSLRequest are refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import postgres from 'postgres';
import {
  BackendCode,
  SSL_REQUEST,
  Writer,
  decodeErrorResponse,
  writeStartupMessage,
} from '@tessera/pg-wire';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { RawClient } from './testing/raw-client.js';

const run = promisify(execFile);
const PSQL = '/usr/lib/postgresql/15/bin/psql';
let c: TestCluster;
let dir: string;
let tls: { tlsCert: string; tlsKey: string };

async function psql(
  sslmode: string,
  commands: string[],
  user = 'postgres',
  password?: string,
): Promise<string> {
  const args = ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1'];
  for (const cmd of commands) args.push('-c', cmd);
  args.push(`host=127.0.0.1 port=${c.router.port} user=${user} dbname=postgres sslmode=${sslmode}`);
  const env: NodeJS.ProcessEnv = { ...process.env, PGCONNECT_TIMEOUT: '5' };
  if (password !== undefined) env['PGPASSWORD'] = password;
  const { stdout } = await run(PSQL, args, { env });
  return stdout.trim();
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-tls-'));
  tls = { tlsCert: join(dir, 'cert.pem'), tlsKey: join(dir, 'key.pem') };
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-days',
      '1',
    ].concat(['-keyout', tls.tlsKey, '-out', tls.tlsCert]),
    { stdio: 'ignore' },
  );
  c = await startTestCluster({ router: tls });
});
after(async () => {
  await c?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('TLS', () => {
  test('pg connects over TLS and queries', async () => {
    const cl = new pg.Client({
      connectionString: c.url(),
      ssl: { rejectUnauthorized: false },
    });
    await cl.connect();
    try {
      const stream = (cl as unknown as { connection: { stream: unknown } }).connection.stream;
      assert.ok(stream instanceof TLSSocket && stream.encrypted, 'the connection is TLS');
      assert.equal((await cl.query('select 41 + 1 as x')).rows[0].x, 42);
    } finally {
      await cl.end();
    }
  });

  test('psql with sslmode=require connects over TLS, sslmode=disable in the clear', async () => {
    const secure = await psql('require', ['select 1', '\\conninfo']);
    assert.match(secure, /^1\n/);
    assert.match(secure, /SSL connection \(protocol: TLSv1\.[23]/);
    const plain = await psql('disable', ['select 2', '\\conninfo']);
    assert.match(plain, /^2\n/);
    assert.doesNotMatch(plain, /SSL connection/);
  });

  test('postgres.js with ssl: require', async () => {
    const sql = postgres(c.url(), { ssl: 'require', max: 1, onnotice: () => undefined });
    try {
      const [row] = await sql`select 7 as x`;
      assert.equal(row?.['x'], 7);
    } finally {
      await sql.end();
    }
  });

  test('bytes pipelined after SSLRequest are refused with 08P01', async () => {
    const raw = await RawClient.open(c.router.port);
    raw.send(
      Buffer.concat([
        SSL_REQUEST,
        writeStartupMessage(new Writer(), { user: 'postgres', database: 'postgres' }).flush(),
      ]),
    );
    const frames = await raw.until((f) => f.code === BackendCode.ErrorResponse);
    assert.equal(decodeErrorResponse(frames[frames.length - 1]!.body).code, '08P01');
    assert.ok(await raw.closedWithin(2000));
  });

  test('a TLS handshake that never comes is cut off by the login timeout', async () => {
    await c.restartRouter({ ...tls, loginTimeoutMs: 500 });
    const raw = await RawClient.open(c.router.port);
    raw.send(SSL_REQUEST);
    assert.ok(await raw.closedWithin(5000), 'closed');
  });

  test('--tls-required refuses plain connections with 28000; SCRAM works over TLS', async () => {
    await c.home.query("create role tls_app login password 'tls-pw'");
    await c.restartRouter({ ...tls, tlsRequired: true, auth: 'scram' });
    await assert.rejects(psql('disable', ['select 1'], 'tls_app', 'tls-pw'), (e: Error) => {
      assert.match(e.message, /FATAL: {2}the router accepts only TLS connections/);
      return true;
    });
    const refused = new pg.Client({ connectionString: c.url() });
    await assert.rejects(refused.connect(), { code: '28000' });
    assert.equal(await psql('require', ['select current_user'], 'tls_app', 'tls-pw'), 'tls_app');
    const cl = new pg.Client({
      host: '127.0.0.1',
      port: c.router.port,
      user: 'tls_app',
      password: 'tls-pw',
      database: 'postgres',
      ssl: { rejectUnauthorized: false },
    });
    await cl.connect();
    assert.equal((await cl.query('select current_user as u')).rows[0].u, 'tls_app');
    await cl.end();
  });
});
