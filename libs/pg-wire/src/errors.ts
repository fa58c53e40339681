// The one error type the codec throws for bad input from a peer. It carries a SQLSTATE so the
// wire edge can turn it into an ErrorResponse (08P01 protocol_violation unless said otherwise)
// before closing the connection.

/** SQLSTATE 08P01, protocol_violation. */
export const PROTOCOL_VIOLATION = '08P01';

/**
 * A peer sent bytes that do not follow the protocol (bad length, truncated body, unknown
 * startup code, ...). After a ProtocolError from a FrameReader the stream is out of sync and the
 * connection must be closed.
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly sqlstate: string;

  constructor(message: string, sqlstate: string = PROTOCOL_VIOLATION) {
    super(message);
    this.sqlstate = sqlstate;
  }
}

/** Shorthand used by decoders: a body ended before a field it must contain. */
export function truncated(what: string): ProtocolError {
  return new ProtocolError(`invalid message format: ${what} is truncated`);
}
