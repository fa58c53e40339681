// TLS for client connections, as Postgres does it: the client asks with SSLRequest in the
// clear, the router answers 'S' and the same TCP connection continues as a TLS session, the
// startup packet included. The certificate is read once at start.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { TLSSocket, createSecureContext, type SecureContext } from 'node:tls';
import { ConfigError } from '../errors.js';

/** The server context from PEM files; a file that cannot be read or parsed is a ConfigError. */
export function loadTlsContext(certFile: string, keyFile: string): SecureContext {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(certFile);
    key = readFileSync(keyFile);
  } catch (e) {
    throw new ConfigError(`cannot read the TLS certificate or key: ${(e as Error).message}`);
  }
  try {
    // TLS 1.2 is the oldest Postgres 15 accepts by default (ssl_min_protocol_version).
    return createSecureContext({ cert, key, minVersion: 'TLSv1.2' });
  } catch (e) {
    throw new ConfigError(`the TLS certificate or key is not usable: ${(e as Error).message}`);
  }
}

/**
 * The server side of the handshake over `raw`, which must have nothing unread: call it in the
 * same tick as the 'S' is written, so the client's first TLS record is read by the TLS layer.
 */
export function startTls(raw: Socket, context: SecureContext): TLSSocket {
  const secure = new TLSSocket(raw, { isServer: true, secureContext: context });
  // Closing either side closes both; the raw socket must not outlive its TLS session.
  secure.once('close', () => raw.destroy());
  return secure;
}
