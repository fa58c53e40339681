// Our encoders and decoders against a real Postgres 15 over a socket: startup, simple and
// extended query, errors, COPY both ways, CancelRequest, and SCRAM-SHA-256 as the client role
// plus our verifier format checked against pg_authid.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { Writer } from './writer.js';
import { BackendCode } from './codes.js';
import { WireConn, codes } from './wire-conn.test-support.js';
import * as fe from './frontend-encode.js';
import * as bd from './backend-decode.js';
import { decodeErrorResponse } from './notice-fields.js';
import { ScramClient } from './scram-client.js';
import { ScramServer } from './scram-server.js';
import { createScramVerifier, parseScramVerifier } from './scram-common.js';

let pg: PgServer;

before(async () => {
  pg = await startPostgres({ name: 'pgwire' });
});

after(async () => {
  await pg?.dispose();
});

/** Startup as `user` with trust auth; returns the connection and what the server announced. */
async function startTrusted(
  user = 'postgres',
): Promise<{ conn: WireConn; params: Map<string, string>; key: bd.BackendKeyData }> {
  const conn = await WireConn.open(pg.port);
  conn.send(
    fe.writeStartupMessage(new Writer(), {
      user,
      database: 'postgres',
      application_name: 'pg-wire-test',
    }),
  );
  const frames = await conn.untilReady();
  const params = new Map<string, string>();
  let key: bd.BackendKeyData | undefined;
  for (const f of frames) {
    switch (f.code) {
      case BackendCode.Authentication:
        assert.deepEqual(bd.decodeAuthentication(f.body), { type: 'Ok' });
        break;
      case BackendCode.ParameterStatus: {
        const p = bd.decodeParameterStatus(f.body);
        params.set(p.name, p.value);
        break;
      }
      case BackendCode.BackendKeyData:
        key = bd.decodeBackendKeyData(f.body);
        break;
      case BackendCode.ReadyForQuery:
        assert.equal(bd.decodeReadyForQuery(f.body), 'I');
        break;
      default:
        assert.fail(`unexpected ${String.fromCharCode(f.code)} during startup`);
    }
  }
  assert.ok(key);
  return { conn, params, key: key! };
}

test('startup with trust auth: AuthenticationOk, ParameterStatus, BackendKeyData, ReadyForQuery', async () => {
  const { conn, params, key } = await startTrusted();
  assert.match(params.get('server_version') ?? '', /^15\./);
  assert.equal(params.get('client_encoding'), 'UTF8');
  assert.equal(params.get('application_name'), 'pg-wire-test');
  assert.ok(key.pid > 0);
  conn.send(fe.writeTerminate(new Writer()));
  conn.close();
});

test('simple query select 1, and division by zero as ErrorResponse 22012', async () => {
  const { conn } = await startTrusted();
  conn.send(fe.writeQuery(new Writer(), 'select 1 as one'));
  const frames = await conn.untilReady();
  assert.equal(codes(frames), 'TDCZ');
  const [desc] = bd.decodeRowDescription(frames[0]!.body);
  assert.equal(desc?.name, 'one');
  assert.equal(desc?.typeOid, 23);
  assert.deepEqual(bd.decodeDataRow(frames[1]!.body), [Buffer.from('1')]);
  assert.equal(bd.decodeCommandComplete(frames[2]!.body), 'SELECT 1');
  assert.equal(bd.commandRowCount('SELECT 1'), 1);

  conn.send(fe.writeQuery(new Writer(), 'select 1/0'));
  const err = await conn.untilReady();
  assert.equal(codes(err), 'EZ');
  const fields = decodeErrorResponse(err[0]!.body);
  assert.equal(fields.code, '22012');
  assert.equal(fields.severity, 'ERROR');
  assert.equal(fields.severityNonLocalized, 'ERROR');
  assert.equal(fields.message, 'division by zero');
  assert.equal(bd.decodeReadyForQuery(err[1]!.body), 'I');

  // Inside a transaction block the error leaves it failed: ReadyForQuery 'E'.
  conn.send(fe.writeQuery(new Writer(), 'begin; select 1/0'));
  const failed = await conn.untilReady();
  assert.equal(codes(failed), 'CEZ');
  assert.equal(bd.decodeReadyForQuery(failed[2]!.body), 'E');
  conn.send(fe.writeQuery(new Writer(), 'rollback'));
  assert.equal(bd.decodeReadyForQuery((await conn.untilReady()).at(-1)!.body), 'I');
  conn.close();
});

test('extended query: Parse/Bind/Describe/Execute/Sync with text and binary parameters', async () => {
  const { conn } = await startTrusted();
  const w = new Writer();
  const int8 = Buffer.alloc(8);
  int8.writeBigInt64BE(21n);
  fe.writeParse(w, 'st1', 'select $1::int8 * 2 as doubled, $2::text as t, null::int as n', [20, 0]);
  fe.writeBind(w, {
    statement: 'st1',
    paramFormats: [1, 0],
    params: [int8, 'héllo'],
    resultFormats: [1, 0, 0],
  });
  fe.writeDescribe(w, 'P', '');
  fe.writeExecute(w, '', 0);
  fe.writeSync(w);
  conn.send(w);
  const frames = await conn.untilReady();
  assert.equal(codes(frames), '12TDCZ');
  const fields = bd.decodeRowDescription(frames[2]!.body);
  assert.deepEqual(
    fields.map((f) => [f.name, f.typeOid, f.format]),
    [
      ['doubled', 20, 1],
      ['t', 25, 0],
      ['n', 23, 0],
    ],
  );
  const [doubled, t, n] = bd.decodeDataRow(frames[3]!.body);
  assert.equal(doubled!.readBigInt64BE(0), 42n);
  assert.equal(t!.toString('utf8'), 'héllo');
  assert.equal(n, null);
  assert.equal(bd.decodeCommandComplete(frames[4]!.body), 'SELECT 1');

  // The named statement again, this time described as a statement, and with an error.
  fe.writeDescribe(w, 'S', 'st1');
  fe.writeSync(w);
  conn.send(w);
  const described = await conn.untilReady();
  assert.equal(codes(described), 'tTZ');
  assert.deepEqual(bd.decodeParameterDescription(described[0]!.body), [20, 25]);

  fe.writeParse(w, '', 'select 1 / $1::int', []);
  fe.writeBind(w, { params: ['0'] });
  fe.writeExecute(w);
  fe.writeSync(w);
  conn.send(w);
  const failed = await conn.untilReady();
  // Planning with the bound value folds 1/0, so the error comes at Bind; the rest is skipped
  // until Sync.
  assert.equal(codes(failed), '1EZ');
  assert.equal(decodeErrorResponse(failed[1]!.body).code, '22012');

  fe.writeClose(w, 'S', 'st1');
  fe.writeSync(w);
  conn.send(w);
  assert.equal(codes(await conn.untilReady()), '3Z');
  conn.close();
});

test('COPY out and COPY in', async () => {
  const { conn } = await startTrusted();
  conn.send(
    fe.writeQuery(new Writer(), 'copy (select g, g * 10 from generate_series(1, 3) g) to stdout'),
  );
  const out = await conn.untilReady();
  assert.equal(codes(out), 'HdddcCZ');
  assert.deepEqual(bd.decodeCopyResponse(out[0]!.body), { format: 0, columnFormats: [0, 0] });
  assert.equal(out[1]!.body.toString(), '1\t10\n');
  assert.equal(bd.decodeCommandComplete(out[5]!.body), 'COPY 3');

  conn.send(fe.writeQuery(new Writer(), 'create temp table t (a int, b text)'));
  await conn.untilReady();
  conn.send(fe.writeQuery(new Writer(), 'copy t from stdin'));
  const start = await conn.next();
  assert.equal(start.code, BackendCode.CopyInResponse);
  const w = new Writer();
  fe.writeCopyData(w, Buffer.from('1\tone\n2\t'));
  fe.writeCopyData(w, Buffer.from('two\n'));
  fe.writeCopyDone(w);
  conn.send(w);
  const done = await conn.untilReady();
  assert.equal(codes(done), 'CZ');
  assert.equal(bd.commandRowCount(bd.decodeCommandComplete(done[0]!.body)), 2);

  conn.send(fe.writeQuery(new Writer(), 'copy t from stdin'));
  await conn.next();
  conn.send(fe.writeCopyFail(new Writer(), 'client gave up'));
  const failed = await conn.untilReady();
  assert.equal(codes(failed), 'EZ');
  assert.match(decodeErrorResponse(failed[0]!.body).message, /client gave up/);
  conn.close();
});

test('CancelRequest with the BackendKeyData cancels a running query (57014)', async () => {
  const { conn, key } = await startTrusted();
  conn.send(fe.writeQuery(new Writer(), 'select pg_sleep(30)'));
  // Cancel only once the query runs; a cancel that reaches an idle backend does nothing.
  for (let i = 0; i < 100; i++) {
    const [row] = await pg.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity where pid = $1 and state = 'active'`,
      [key.pid],
    );
    if (row?.n === '1') break;
    await sleep(50);
  }
  const cancel = await WireConn.open(pg.port);
  cancel.send(fe.writeCancelRequest(new Writer(), key.pid, key.secret));
  const frames = await conn.untilReady();
  assert.equal(codes(frames), 'TEZ');
  assert.equal(decodeErrorResponse(frames[1]!.body).code, '57014');
  cancel.close();
  conn.close();
});

test('SCRAM-SHA-256 against Postgres: our client role logs in, a wrong password gets 28P01, our verifier matches pg_authid', async () => {
  await pg.query(
    `set password_encryption = 'scram-sha-256'; create role alice login password 'wonder land ☃'`,
  );
  writeFileSync(
    join(pg.dataDir, 'pg_hba.conf'),
    'host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n',
  );
  await pg.query('select pg_reload_conf()');
  await sleep(300);

  const [row] = await pg.query<{ rolpassword: string }>(
    `select rolpassword from pg_authid where rolname = 'alice'`,
  );
  const stored = parseScramVerifier(row!.rolpassword);
  assert.ok(stored, row?.rolpassword);
  // Same password, same salt and iterations: byte-identical verifier.
  assert.equal(
    createScramVerifier('wonder land ☃', { salt: stored!.salt, iterations: stored!.iterations }),
    row!.rolpassword,
  );
  // And our server role accepts our client role with Postgres' own stored verifier.
  const server = new ScramServer(stored!);
  const client = new ScramClient('wonder land ☃');
  client.receiveServerFinal(
    server.receiveClientFinal(
      client.receiveServerFirst(server.receiveClientFirst(client.clientFirstMessage())),
    ),
  );

  async function login(password: string): Promise<WireConn> {
    const conn = await WireConn.open(pg.port);
    conn.send(fe.writeStartupMessage(new Writer(), { user: 'alice', database: 'postgres' }));
    const req = bd.decodeAuthentication((await conn.next()).body);
    assert.equal(req.type, 'SASL');
    assert.ok(req.type === 'SASL' && req.mechanisms.includes('SCRAM-SHA-256'));
    const scram = new ScramClient(password);
    conn.send(
      fe.writeSASLInitialResponse(new Writer(), 'SCRAM-SHA-256', scram.clientFirstMessage()),
    );
    const cont = await conn.next();
    const c = bd.decodeAuthentication(cont.body);
    assert.equal(c.type, 'SASLContinue');
    if (c.type !== 'SASLContinue') throw new Error('unreachable');
    conn.send(fe.writeSASLResponse(new Writer(), scram.receiveServerFirst(c.data)));
    const reply = await conn.next();
    if (reply.code === BackendCode.ErrorResponse) {
      const e = decodeErrorResponse(reply.body);
      conn.close();
      throw Object.assign(new Error(e.message), { code: e.code });
    }
    const fin = bd.decodeAuthentication(reply.body);
    assert.equal(fin.type, 'SASLFinal');
    if (fin.type === 'SASLFinal') scram.receiveServerFinal(fin.data);
    const rest = await conn.untilReady();
    assert.deepEqual(bd.decodeAuthentication(rest[0]!.body), { type: 'Ok' });
    return conn;
  }

  const conn = await login('wonder land ☃');
  conn.send(fe.writeQuery(new Writer(), 'select current_user'));
  const frames = await conn.untilReady();
  assert.deepEqual(bd.decodeDataRow(frames[1]!.body), [Buffer.from('alice')]);
  conn.close();

  await assert.rejects(login('wrong'), (e: Error & { code?: string }) => e.code === '28P01');
});
