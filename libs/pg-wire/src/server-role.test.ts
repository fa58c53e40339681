// Our codec speaking as a server to a real client: a tiny server built on FrameReader, the
// decoders, the backend encoders and ScramServer, and the `pg` npm driver connecting to it with
// SCRAM-SHA-256, running simple and parameterized queries, and failing with a wrong password.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { FrameReader, type Frame } from './frame-reader.js';
import { Writer } from './writer.js';
import { FrontendCode } from './codes.js';
import { ProtocolError } from './errors.js';
import { parseStartup } from './startup.js';
import {
  bindParam,
  decodeParse,
  decodeQuery,
  decodeSASLInitialResponse,
} from './frontend-decode.js';
import * as be from './backend-encode.js';
import { writeErrorResponse } from './notice-fields.js';
import {
  createScramVerifier,
  parseScramVerifier,
  ScramError,
  SCRAM_SHA_256,
} from './scram-common.js';
import { ScramServer } from './scram-server.js';

const USER = 'alice';
const PASSWORD = 'open sesame';
const verifier = parseScramVerifier(createScramVerifier(PASSWORD))!;
/** What the server saw, for assertions. */
const seen: { sql: string[]; params: string[] } = { sql: [], params: [] };

type Phase = 'startup' | 'sasl-initial' | 'sasl-response' | 'ready';

/** One client session: a state machine fed frames; answers accumulate in one Writer per read. */
class Session {
  private readonly reader = new FrameReader({ maxFrameLength: 64 * 1024 });
  private readonly out = new Writer();
  private phase: Phase = 'startup';
  private scram: ScramServer | undefined;
  private lastSql = '';
  /** The row Execute returns: the echoed first Bind parameter. */
  private pendingRow = '';

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
  }

  private onData(chunk: Buffer): void {
    this.reader.push(chunk);
    try {
      while (true) {
        if (this.phase === 'startup') {
          const body = this.reader.readStartup();
          if (!body) break;
          this.onStartup(body);
          continue;
        }
        const f = this.reader.next();
        if (!f) break;
        this.onFrame(f);
      }
    } catch (e) {
      // Errors convert at the edge: a typed error becomes an ErrorResponse with its SQLSTATE.
      const code = e instanceof ProtocolError || e instanceof ScramError ? e.sqlstate : 'XX000';
      const message =
        e instanceof ScramError && code === '28P01'
          ? `password authentication failed for user "${USER}"`
          : String(e);
      writeErrorResponse(this.out, { severity: 'FATAL', code, message });
      this.socket.end(this.out.flush());
      return;
    }
    if (this.out.length > 0) this.socket.write(this.out.flush());
  }

  private onStartup(body: Buffer): void {
    const p = parseStartup(body);
    if (p.kind === 'ssl' || p.kind === 'gssenc') {
      this.out.bytes(Buffer.from('N'));
      return;
    }
    if (p.kind === 'cancel') throw new ProtocolError('cancel not supported here');
    if (p.params.get('user') !== USER) throw new ScramError('unknown user', '28P01');
    be.writeAuthenticationSASL(this.out, [SCRAM_SHA_256]);
    this.phase = 'sasl-initial';
  }

  private onFrame(f: Frame): void {
    switch (this.phase) {
      case 'sasl-initial': {
        if (f.code !== FrontendCode.PasswordMessage)
          throw new ProtocolError('expected SASLInitialResponse');
        const init = decodeSASLInitialResponse(f.body);
        if (init.mechanism !== SCRAM_SHA_256 || !init.data)
          throw new ProtocolError('unsupported SASL mechanism');
        this.scram = new ScramServer(verifier);
        be.writeAuthenticationSASLContinue(this.out, this.scram.receiveClientFirst(init.data));
        this.phase = 'sasl-response';
        return;
      }
      case 'sasl-response': {
        if (f.code !== FrontendCode.PasswordMessage || !this.scram)
          throw new ProtocolError('expected SASLResponse');
        be.writeAuthenticationSASLFinal(this.out, this.scram.receiveClientFinal(f.body));
        be.writeAuthenticationOk(this.out);
        be.writeParameterStatus(this.out, 'server_version', '15.0');
        be.writeParameterStatus(this.out, 'client_encoding', 'UTF8');
        be.writeParameterStatus(this.out, 'standard_conforming_strings', 'on');
        be.writeParameterStatus(this.out, 'integer_datetimes', 'on');
        be.writeBackendKeyData(this.out, 4242, 1234567);
        be.writeReadyForQuery(this.out, 'I');
        this.reader.setMaxFrameLength(1 << 30);
        this.phase = 'ready';
        return;
      }
      case 'ready':
        this.onQueryFrame(f);
        return;
      case 'startup':
        throw new ProtocolError('unexpected frame before startup');
    }
  }

  private onQueryFrame(f: Frame): void {
    switch (f.code) {
      case FrontendCode.Query: {
        const sql = decodeQuery(f.body);
        seen.sql.push(sql);
        if (sql === 'select 1/0') {
          writeErrorResponse(this.out, {
            severity: 'ERROR',
            code: '22012',
            message: 'division by zero',
          });
        } else {
          be.writeRowDescription(this.out, [{ name: 'one', typeOid: 23, typeSize: 4 }]);
          be.writeDataRow(this.out, ['1']);
          be.writeCommandComplete(this.out, 'SELECT 1');
        }
        be.writeReadyForQuery(this.out, 'I');
        return;
      }
      case FrontendCode.Parse:
        this.lastSql = decodeParse(f.body).sql;
        seen.sql.push(this.lastSql);
        be.writeParseComplete(this.out);
        return;
      case FrontendCode.Bind: {
        // The router's shard-key path: one parameter, without decoding the Bind.
        const p = bindParam(f.body, 0);
        const value = p?.value ? p.value.toString('utf8') : '';
        seen.params.push(value);
        be.writeBindComplete(this.out);
        this.pendingRow = value;
        return;
      }
      case FrontendCode.Describe:
        be.writeRowDescription(this.out, [{ name: 'echo', typeOid: 25 }]);
        return;
      case FrontendCode.Execute:
        be.writeDataRow(this.out, [this.pendingRow]);
        be.writeCommandComplete(this.out, 'SELECT 1');
        return;
      case FrontendCode.Sync:
        be.writeReadyForQuery(this.out, 'I');
        return;
      case FrontendCode.Flush:
        return;
      case FrontendCode.Terminate:
        this.socket.end();
        return;
      default:
        throw new ProtocolError(`unexpected message ${String.fromCharCode(f.code)}`);
    }
  }
}

let server: Server;
let port = 0;

before(async () => {
  server = createServer((socket) => new Session(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.close();
});

function client(password: string): pg.Client {
  return new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'app' });
}

test('the pg driver authenticates with SCRAM-SHA-256 against our server role and runs queries', async () => {
  const c = client(PASSWORD);
  await c.connect();
  try {
    const simple = await c.query('select 1');
    assert.deepEqual(simple.rows, [{ one: 1 }]);
    const extended = await c.query('select $1::text as echo', ['shard-key-7']);
    assert.deepEqual(extended.rows, [{ echo: 'shard-key-7' }]);
    assert.deepEqual(seen.params, ['shard-key-7']);
    assert.ok(seen.sql.includes('select $1::text as echo'));
    await assert.rejects(
      c.query('select 1/0'),
      (e: Error & { code?: string }) => e.code === '22012',
    );
    // The session survives the error.
    assert.deepEqual((await c.query('select 1')).rows, [{ one: 1 }]);
  } finally {
    await c.end();
  }
});

test('the pg driver gets 28P01 for a wrong password', async () => {
  const c = client('not it');
  await assert.rejects(c.connect(), (e: Error & { code?: string }) => e.code === '28P01');
  await c.end().catch(() => undefined);
});
