// The startup handshake of a client connection: SSLRequest accepted with 'S' and TLS when a
// certificate is configured ('N' otherwise), GSSENCRequest refused with 'N', CancelRequest
// forwarded, protocol 3.0 checked, trust or SCRAM authentication, then the ParameterStatus values
// of a real backend, a router-minted BackendKeyData, and ReadyForQuery.
import {
  READY_FOR_QUERY_IDLE,
  SSL_ACCEPT,
  SSL_REFUSE,
  Writer,
  parseStartup,
  writeAuthenticationOk,
  writeBackendKeyData,
  writeNegotiateProtocolVersion,
  writeParameterStatus,
  type StartupMessage,
} from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Session } from './session.js';
import { learnLoginNames } from './names.js';
import { errorFields, errorFrame } from './errors-wire.js';
import { authenticateScram } from './auth-scram.js';
import { startTls } from './tls.js';

/** Parameters a backend reports that a client's own startup value overrides. */
const CLIENT_REPORTED = [
  'application_name',
  'client_encoding',
  'DateStyle',
  'TimeZone',
  'IntervalStyle',
  'standard_conforming_strings',
];

/** True when the client is logged in and ready; false when the connection should close. */
export async function runStartup(s: Session): Promise<boolean> {
  const startup = await startupPacket(s);
  if (startup === undefined) return false;
  if (s.refusal) throw s.refusal;
  if (s.services.config.tlsRequired && !s.encrypted) {
    throw new RouterError(
      SQLSTATE.invalidAuthorization,
      'the router accepts only TLS connections; connect with sslmode=require',
      'FATAL',
    );
  }
  const user = startup.params.get('user');
  if (user === undefined || user === '') {
    throw new RouterError(
      SQLSTATE.invalidAuthorization,
      'no PostgreSQL user name specified in startup packet',
      'FATAL',
    );
  }
  s.user = user;
  s.database = startup.params.get('database') || user;
  s.settings.fromStartup(startup.params);
  const w = new Writer(512);
  const unknownOptions = [...startup.params.keys()].filter((k) => k.startsWith('_pq_.'));
  if (startup.minor > 0 || unknownOptions.length > 0)
    writeNegotiateProtocolVersion(w, 196608, unknownOptions);
  if (s.services.config.auth === 'scram') {
    if (!s.services.roleSecrets) throw new Error('--auth scram without a verifier source');
    s.socket.write(w.flush());
    const credential = await authenticateScram(s, s.services.roleSecrets);
    if (!credential) return false;
    s.passThrough = credential;
  }
  const serverParams = await homeParams(s);
  if (serverParams === undefined) return false;
  writeAuthenticationOk(w);
  for (const name of CLIENT_REPORTED) {
    const v = startup.params.get(name) ?? startup.params.get(name.toLowerCase());
    if (v !== undefined && serverParams.has(name)) serverParams.set(name, v);
  }
  for (const [name, value] of serverParams) writeParameterStatus(w, name, value);
  const key = s.services.cancels.mintKey();
  s.pid = key.pid;
  s.secret = key.secret;
  s.services.cancels.register(key.pid, s);
  writeBackendKeyData(w, key.pid, key.secret);
  w.bytes(READY_FOR_QUERY_IDLE);
  s.socket.write(w.flush());
  return true;
}

/**
 * The startup packet, after any SSLRequest (TLS from then on) or GSSENCRequest; undefined when the
 * connection closed or was a CancelRequest (forwarded).
 */
async function startupPacket(s: Session): Promise<StartupMessage | undefined> {
  for (;;) {
    const body = s.input.reader.readStartup();
    if (body === undefined) {
      if (s.closed) return undefined;
      await s.input.waitData();
      continue;
    }
    const packet = parseStartup(body);
    switch (packet.kind) {
      case 'ssl':
        if (s.encrypted) throw protocolViolation('SSLRequest over a connection already using TLS');
        if (s.services.tls === undefined) {
          // No TLS configured: say so and expect the real startup packet in the clear.
          s.socket.write(SSL_REFUSE);
          continue;
        }
        // Bytes sent after SSLRequest but before the handshake would be read as if they came
        // over TLS (CVE-2021-23214): a client that pipelines them is refused, as Postgres does.
        if (s.input.reader.buffered > 0)
          throw protocolViolation('received unencrypted data after SSL request');
        s.socket.write(SSL_ACCEPT);
        s.useSocket(startTls(s.socket, s.services.tls));
        continue;
      case 'gssenc':
        if (s.encrypted)
          throw protocolViolation('GSSENCRequest over a connection already using TLS');
        s.socket.write(SSL_REFUSE);
        continue;
      case 'cancel':
        s.services.cancels.cancel(packet.pid, packet.secret);
        return undefined;
      case 'startup':
        return packet;
    }
  }
}

/**
 * Logs in on the home node as the client's role: the node itself says whether the role and
 * database exist, and its ParameterStatus values are what the client should see. Undefined (the
 * client told, FATAL) when it refuses.
 */
async function homeParams(s: Session): Promise<Map<string, string> | undefined> {
  const catalog = s.services.catalog();
  if (!catalog)
    throw new RouterError(
      SQLSTATE.cannotConnectNow,
      'the router has no valid catalog yet; retry shortly',
      'FATAL',
    );
  try {
    const pool = s.services.pools.pool(catalog, catalog.home, s.database, s.user);
    const b = await pool.acquire(s.services.config.acquireTimeoutMs, s.passThrough);
    const params = new Map(b.params);
    try {
      // The database exists and the role may use it: watch it for DDL before the facts are read.
      await s.services.ddlWatch?.watch(s.database);
      await learnLoginNames(s, b, catalog, s.services.config.acquireTimeoutMs);
    } catch (e) {
      b.destroy('login name lookup failed');
      throw e;
    } finally {
      pool.release(b);
    }
    return params;
  } catch (e) {
    const { fields } = errorFields(e);
    s.services.metrics.error(fields.code);
    s.out.push(errorFrame({ ...fields, severity: 'FATAL' }));
    s.out.flush();
    return undefined;
  }
}

function protocolViolation(message: string): RouterError {
  return new RouterError(SQLSTATE.protocolViolation, message, 'FATAL');
}
