// Messages whose bytes never vary, built once at load and written as they are. Never mutate them.

function frame(code: number): Buffer {
  return Buffer.from([code, 0, 0, 0, 4]);
}

// Frontend.
export const SYNC = frame(0x53);
export const FLUSH = frame(0x48);
export const TERMINATE = frame(0x58);
/** CopyDone is the same in both directions. */
export const COPY_DONE = frame(0x63);
/** SSLRequest: length 8, code 80877103. */
export const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
/** GSSENCRequest: length 8, code 80877104. */
export const GSSENC_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30]);

// Backend.
export const PARSE_COMPLETE = frame(0x31);
export const BIND_COMPLETE = frame(0x32);
export const CLOSE_COMPLETE = frame(0x33);
export const NO_DATA = frame(0x6e);
export const EMPTY_QUERY_RESPONSE = frame(0x49);
export const PORTAL_SUSPENDED = frame(0x73);
export const AUTHENTICATION_OK = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]);
export const AUTHENTICATION_CLEARTEXT_PASSWORD = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]);
export const READY_FOR_QUERY_IDLE = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
export const READY_FOR_QUERY_IN_TRANSACTION = Buffer.from([0x5a, 0, 0, 0, 5, 0x54]);
export const READY_FOR_QUERY_FAILED = Buffer.from([0x5a, 0, 0, 0, 5, 0x45]);
/** One-byte answers to SSLRequest / GSSENCRequest: go ahead with TLS, or refuse. */
export const SSL_ACCEPT = Buffer.from('S');
export const SSL_REFUSE = Buffer.from('N');
