// --auth scram against real Postgres: every node requires scram-sha-256 for host connections
// (except the `postgres` service login), role `app` has a password on home and the same verifier
// on the data nodes. Real clients log in through the router and their statements run on data
// nodes as `app` (SCRAM pass-through); every kind of refusal looks exactly like a wrong password.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import postgres from 'postgres';
import {
  BackendCode,
  Writer,
  decodeAuthentication,
  decodeErrorResponse,
  writeSASLInitialResponse,
  writeStartupMessage,
} from '@tessera/pg-wire';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { RawClient } from './testing/raw-client.js';

const run = promisify(execFile);
const PSQL = '/usr/lib/postgresql/15/bin/psql';
const HBA = `local all all trust
host all postgres 127.0.0.1/32 trust
host all postgres ::1/128 trust
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
`;

let c: TestCluster;

/** Gives `role` on every data node the exact verifier it has on home. */
async function copyVerifier(role: string): Promise<void> {
  const [row] = await c.home.query<{ rolpassword: string }>(
    'select rolpassword from pg_authid where rolname = $1',
    [role],
  );
  for (const node of c.data) {
    // ALTER ROLE ... PASSWORD '<a SCRAM verifier>' stores the verifier as given.
    await node.query(`alter role ${role} password '${row!.rolpassword}'`);
  }
}

function client(user: string, password: string): pg.Client {
  return new pg.Client({
    host: '127.0.0.1',
    port: c.router.port,
    database: 'postgres',
    user,
    password,
  });
}

/** The error a login attempt ends with (it must end with one). */
async function loginError(user: string, password: string): Promise<Record<string, unknown>> {
  const cl = client(user, password);
  try {
    await cl.connect();
  } catch (e) {
    const { severity, code, message } = e as Record<string, unknown>;
    return { severity, code, message };
  } finally {
    await cl.end().catch(() => undefined);
  }
  throw new Error(`${user} logged in`);
}

before(async () => {
  c = await startTestCluster({ router: { auth: 'scram' } });
  const all = [c.home, ...c.data];
  for (const node of all) {
    await node.query("set password_encryption = 'scram-sha-256'; create role app login");
    await node.query('create role ghost nologin');
    await node.query(
      'create table orders (tenant_id bigint not null, id bigint not null, who text not null default current_user, primary key (tenant_id, id))',
    );
    await node.query('grant select, insert on orders to app');
  }
  await c.home.query(`set password_encryption = 'scram-sha-256';
    alter role app password 'app-pw';
    alter role ghost password 'ghost-pw';
    alter role postgres password 'admin-pw';
    create role expired login password 'old-pw' valid until '2001-01-01';
    set password_encryption = 'md5';
    create role oldie login password 'oldie-pw'`);
  await copyVerifier('app');
  for (const node of all) {
    writeFileSync(join(node.dataDir, 'pg_hba.conf'), HBA);
    await node.query('select pg_reload_conf()');
  }
});
after(async () => {
  await c?.dispose();
});

describe('SCRAM for clients', () => {
  test('the nodes themselves now refuse app without its password', async () => {
    const node = c.data[0]!;
    const direct = new pg.Client({ host: node.host, port: node.port, user: 'app', password: 'x' });
    await assert.rejects(direct.connect(), { code: '28P01' });
    await direct.end().catch(() => undefined);
  });

  test('pg logs in and its writes run on the data nodes as app', async () => {
    const app = client('app', 'app-pw');
    await app.connect();
    try {
      for (let t = 1; t <= 24; t++)
        await app.query('insert into orders (tenant_id, id) values ($1, 1)', [t]);
      const { rows } = await app.query('select who from orders where tenant_id = $1', [7]);
      assert.deepEqual(rows, [{ who: 'app' }]);
    } finally {
      await app.end();
    }
    for (const node of c.data) {
      const rows = await node.query<{ who: string; n: number }>(
        'select who, count(*)::int as n from orders group by who',
      );
      assert.equal(rows.length, 1, `rows on ${node.name}`);
      assert.equal(rows[0]!.who, 'app');
      assert.ok(rows[0]!.n > 0);
    }
  });

  test('psql logs in with PGPASSWORD and reads from a data node', async () => {
    const [owner] = await c.data[1]!.query<{ tenant_id: string }>(
      'select tenant_id from orders limit 1',
    );
    const { stdout } = await run(
      PSQL,
      [
        '-X',
        '-A',
        '-t',
        '-h',
        '127.0.0.1',
        '-p',
        String(c.router.port),
        '-U',
        'app',
        '-d',
        'postgres',
        '-c',
        `select who, current_user from orders where tenant_id = ${owner!.tenant_id}`,
      ],
      { env: { ...process.env, PGPASSWORD: 'app-pw', PGCONNECT_TIMEOUT: '5' } },
    );
    assert.equal(stdout.trim(), 'app|app');
  });

  test('postgres.js logs in', async () => {
    const sql = postgres({
      host: '127.0.0.1',
      port: c.router.port,
      database: 'postgres',
      user: 'app',
      password: 'app-pw',
      max: 1,
      onnotice: () => undefined,
    });
    try {
      const rows = await sql`select who from orders where tenant_id = ${3}`;
      assert.equal(rows[0]?.['who'], 'app');
    } finally {
      await sql.end();
    }
  });

  test('a wrong password, an unknown user, NOLOGIN, an expired or md5 password: one error', async () => {
    const wrong = await loginError('app', 'not-it');
    assert.deepEqual(wrong, {
      severity: 'FATAL',
      code: '28P01',
      message: 'password authentication failed for user "app"',
    });
    const sameFor = (user: string) => ({
      ...wrong,
      message: `password authentication failed for user "${user}"`,
    });
    assert.deepEqual(await loginError('nobody', 'not-it'), sameFor('nobody'));
    // Right passwords, refused all the same.
    assert.deepEqual(await loginError('ghost', 'ghost-pw'), sameFor('ghost'));
    assert.deepEqual(await loginError('expired', 'old-pw'), sameFor('expired'));
    assert.deepEqual(await loginError('oldie', 'oldie-pw'), sameFor('oldie'));
  });

  test('an unknown user sees a stable salt, as a real one does', async () => {
    const serverFirst = async (user: string): Promise<string> => {
      const raw = await RawClient.open(c.router.port);
      try {
        raw.send(writeStartupMessage(new Writer(), { user, database: 'postgres' }).flush());
        const [sasl] = await raw.until((f) => f.code === BackendCode.Authentication);
        assert.deepEqual(decodeAuthentication(sasl!.body), {
          type: 'SASL',
          mechanisms: ['SCRAM-SHA-256'],
        });
        raw.send(
          writeSASLInitialResponse(new Writer(), 'SCRAM-SHA-256', 'n,,n=,r=abcdefghijkl').flush(),
        );
        const [cont] = await raw.until((f) => f.code === BackendCode.Authentication);
        const auth = decodeAuthentication(cont!.body);
        assert.equal(auth.type, 'SASLContinue');
        // Everything but the server's random nonce part.
        return auth.type === 'SASLContinue' ? auth.data.toString().replace(/^r=[^,]*/, '') : '';
      } finally {
        raw.end();
      }
    };
    const ghostly = await serverFirst('no_such_role');
    assert.match(ghostly, /^,s=[A-Za-z0-9+/=]+,i=4096$/);
    assert.equal(await serverFirst('no_such_role'), ghostly);
    assert.notEqual(await serverFirst('another_unknown'), ghostly);
  });

  test('a malformed SASL message gets 08P01 and a close', async () => {
    const raw = await RawClient.open(c.router.port);
    raw.send(writeStartupMessage(new Writer(), { user: 'app', database: 'postgres' }).flush());
    await raw.until((f) => f.code === BackendCode.Authentication);
    raw.send(writeSASLInitialResponse(new Writer(), 'SCRAM-SHA-256', 'garbage').flush());
    const frames = await raw.until((f) => f.code === BackendCode.ErrorResponse);
    assert.equal(decodeErrorResponse(frames[frames.length - 1]!.body).code, '08P01');
    assert.ok(await raw.closedWithin(2000));
  });

  test('an unknown SASL mechanism gets 08P01 and a close', async () => {
    const raw = await RawClient.open(c.router.port);
    raw.send(writeStartupMessage(new Writer(), { user: 'app', database: 'postgres' }).flush());
    await raw.until((f) => f.code === BackendCode.Authentication);
    raw.send(writeSASLInitialResponse(new Writer(), 'PLAIN', 'app\0app-pw').flush());
    const frames = await raw.until((f) => f.code === BackendCode.ErrorResponse);
    assert.equal(decodeErrorResponse(frames[frames.length - 1]!.body).code, '08P01');
    assert.ok(await raw.closedWithin(2000));
  });

  test('a pre-login message over 64 KiB closes the connection', async () => {
    const raw = await RawClient.open(c.router.port);
    raw.send(writeStartupMessage(new Writer(), { user: 'app', database: 'postgres' }).flush());
    await raw.until((f) => f.code === BackendCode.Authentication);
    raw.send(writeSASLInitialResponse(new Writer(), 'SCRAM-SHA-256', 'x'.repeat(100_000)).flush());
    assert.ok(await raw.closedWithin(2000), 'closed');
    const app = client('app', 'app-pw');
    await app.connect();
    await app.end();
  });

  test('a password change applies within seconds (the verifier cache is short)', async () => {
    await c.home.query("alter role app password 'new-pw'");
    await copyVerifier('app');
    const deadline = Date.now() + 10_000;
    for (;;) {
      const cl = client('app', 'new-pw');
      const ok = await cl.connect().then(
        () => true,
        () => false,
      );
      await cl.end().catch(() => undefined);
      if (ok) break;
      assert.ok(Date.now() < deadline, 'the new password was not accepted within 10 s');
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal((await loginError('app', 'app-pw'))['code'], '28P01');
    // And the new key works on the data nodes, whose verifier changed too.
    const app = client('app', 'new-pw');
    await app.connect();
    try {
      await app.query('insert into orders (tenant_id, id) values ($1, 2)', [5]);
    } finally {
      await app.end();
    }
  });
});
