// Decoding of the untyped first packet a client sends: a StartupMessage or one of the special
// requests (SSL, GSS encryption, cancel) that share its framing.
import { BodyReader } from './body-reader.js';
import { StartupCode } from './codes.js';
import { ProtocolError } from './errors.js';

export interface StartupMessage {
  readonly kind: 'startup';
  /** The whole requested version: major << 16 | minor. */
  readonly version: number;
  readonly major: number;
  readonly minor: number;
  /** Run-time parameters (user, database, options, application_name, ...), `_pq_.` ones included. */
  readonly params: Map<string, string>;
}
export interface SSLRequest {
  readonly kind: 'ssl';
}
export interface GSSENCRequest {
  readonly kind: 'gssenc';
}
export interface CancelRequest {
  readonly kind: 'cancel';
  readonly pid: number;
  readonly secret: number;
}
export type StartupPacket = StartupMessage | SSLRequest | GSSENCRequest | CancelRequest;

/** SQLSTATE 0A000: what Postgres answers to a protocol major version it does not speak. */
const FEATURE_NOT_SUPPORTED = '0A000';

/**
 * Decodes a body from `FrameReader.readStartup()`. Protocol 3.x of any minor version is
 * accepted (the caller answers a minor above 0, or any `_pq_.` option, with
 * NegotiateProtocolVersion); other majors throw ProtocolError with SQLSTATE 0A000.
 */
export function parseStartup(body: Buffer): StartupPacket {
  const r = new BodyReader(body, 'startup packet');
  const code = r.int32();
  switch (code) {
    case StartupCode.SSLRequest:
      r.done();
      return { kind: 'ssl' };
    case StartupCode.GSSENCRequest:
      r.done();
      return { kind: 'gssenc' };
    case StartupCode.CancelRequest: {
      const pid = r.int32();
      const secret = r.int32();
      r.done();
      return { kind: 'cancel', pid, secret };
    }
  }
  const major = code >>> 16;
  const minor = code & 0xffff;
  if (major !== 3) {
    throw new ProtocolError(
      `unsupported frontend protocol ${major}.${minor}: server supports 3.0`,
      FEATURE_NOT_SUPPORTED,
    );
  }
  const params = new Map<string, string>();
  // Name/value pairs, then one empty name ending the list.
  while (true) {
    const name = r.cstring();
    if (name === '') break;
    if (r.remaining === 0)
      throw new ProtocolError(`invalid startup packet layout: parameter "${name}" has no value`);
    params.set(name, r.cstring());
  }
  r.done();
  return { kind: 'startup', version: code, major, minor, params };
}
