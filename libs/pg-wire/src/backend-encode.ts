// Encoders for the messages a router synthesizes toward its clients, speaking as a server:
// authentication, session status, results it computed itself (merged reads, EXPLAIN, errors).
// ErrorResponse/NoticeResponse live in notice-fields.ts with their decoder; CopyData and
// CopyDone, the same bytes in both directions, in frontend-encode.ts.
import { AuthCode, BackendCode, type TransactionStatus } from './codes.js';
import {
  AUTHENTICATION_CLEARTEXT_PASSWORD,
  AUTHENTICATION_OK,
  BIND_COMPLETE,
  CLOSE_COMPLETE,
  EMPTY_QUERY_RESPONSE,
  NO_DATA,
  PARSE_COMPLETE,
  PORTAL_SUSPENDED,
  READY_FOR_QUERY_FAILED,
  READY_FOR_QUERY_IDLE,
  READY_FOR_QUERY_IN_TRANSACTION,
} from './frames.js';
import type { Writer } from './writer.js';

export function writeAuthenticationOk(w: Writer): Writer {
  return w.bytes(AUTHENTICATION_OK);
}

export function writeAuthenticationCleartextPassword(w: Writer): Writer {
  return w.bytes(AUTHENTICATION_CLEARTEXT_PASSWORD);
}

export function writeAuthenticationMD5Password(w: Writer, salt: Uint8Array): Writer {
  if (salt.length !== 4) throw new RangeError('MD5 salt must be 4 bytes');
  return w.begin(BackendCode.Authentication).int32(AuthCode.MD5Password).bytes(salt).end();
}

/** AuthenticationSASL with the mechanisms offered, e.g. ['SCRAM-SHA-256']. */
export function writeAuthenticationSASL(w: Writer, mechanisms: readonly string[]): Writer {
  w.begin(BackendCode.Authentication).int32(AuthCode.SASL);
  for (const m of mechanisms) w.cstring(m);
  return w.int8(0).end();
}

export function writeAuthenticationSASLContinue(w: Writer, data: Uint8Array | string): Writer {
  return writeAuthData(w, AuthCode.SASLContinue, data);
}

export function writeAuthenticationSASLFinal(w: Writer, data: Uint8Array | string): Writer {
  return writeAuthData(w, AuthCode.SASLFinal, data);
}

function writeAuthData(w: Writer, code: number, data: Uint8Array | string): Writer {
  w.begin(BackendCode.Authentication).int32(code);
  if (typeof data === 'string') w.string(data);
  else w.bytes(data);
  return w.end();
}

export function writeParameterStatus(w: Writer, name: string, value: string): Writer {
  return w.begin(BackendCode.ParameterStatus).cstring(name).cstring(value).end();
}

export function writeBackendKeyData(w: Writer, pid: number, secret: number): Writer {
  return w.begin(BackendCode.BackendKeyData).int32(pid).int32(secret).end();
}

export function writeReadyForQuery(w: Writer, status: TransactionStatus): Writer {
  switch (status) {
    case 'I':
      return w.bytes(READY_FOR_QUERY_IDLE);
    case 'T':
      return w.bytes(READY_FOR_QUERY_IN_TRANSACTION);
    case 'E':
      return w.bytes(READY_FOR_QUERY_FAILED);
  }
}

export interface FieldSpec {
  name: string;
  tableOid?: number;
  columnAttr?: number;
  typeOid: number;
  /** Default -1 (variable width). */
  typeSize?: number;
  /** Default -1 (none). */
  typeModifier?: number;
  /** Default 0 (text). */
  format?: number;
}

export function writeRowDescription(w: Writer, fields: readonly FieldSpec[]): Writer {
  w.begin(BackendCode.RowDescription).int16(fields.length);
  for (const f of fields) {
    w.cstring(f.name)
      .uint32(f.tableOid ?? 0)
      .int16(f.columnAttr ?? 0)
      .uint32(f.typeOid)
      .int16(f.typeSize ?? -1)
      .int32(f.typeModifier ?? -1)
      .int16(f.format ?? 0);
  }
  return w.end();
}

/** DataRow; a string column is sent as UTF-8 text, null as SQL NULL. */
export function writeDataRow(w: Writer, columns: readonly (Uint8Array | string | null)[]): Writer {
  w.begin(BackendCode.DataRow).int16(columns.length);
  for (const c of columns) {
    if (c === null) {
      w.int32(-1);
    } else if (typeof c === 'string') {
      const b = Buffer.from(c, 'utf8');
      w.int32(b.length).bytes(b);
    } else {
      w.int32(c.length).bytes(c);
    }
  }
  return w.end();
}

export function writeCommandComplete(w: Writer, tag: string): Writer {
  return w.begin(BackendCode.CommandComplete).cstring(tag).end();
}

export function writeEmptyQueryResponse(w: Writer): Writer {
  return w.bytes(EMPTY_QUERY_RESPONSE);
}

export function writeParseComplete(w: Writer): Writer {
  return w.bytes(PARSE_COMPLETE);
}

export function writeBindComplete(w: Writer): Writer {
  return w.bytes(BIND_COMPLETE);
}

export function writeCloseComplete(w: Writer): Writer {
  return w.bytes(CLOSE_COMPLETE);
}

export function writeNoData(w: Writer): Writer {
  return w.bytes(NO_DATA);
}

export function writePortalSuspended(w: Writer): Writer {
  return w.bytes(PORTAL_SUSPENDED);
}

export function writeParameterDescription(w: Writer, typeOids: readonly number[]): Writer {
  w.begin(BackendCode.ParameterDescription).int16(typeOids.length);
  for (const oid of typeOids) w.uint32(oid);
  return w.end();
}

export function writeCopyInResponse(
  w: Writer,
  format: number,
  columnFormats: readonly number[],
): Writer {
  return writeCopyResponse(w, BackendCode.CopyInResponse, format, columnFormats);
}

export function writeCopyOutResponse(
  w: Writer,
  format: number,
  columnFormats: readonly number[],
): Writer {
  return writeCopyResponse(w, BackendCode.CopyOutResponse, format, columnFormats);
}

function writeCopyResponse(
  w: Writer,
  code: number,
  format: number,
  columnFormats: readonly number[],
): Writer {
  w.begin(code).int8(format).int16(columnFormats.length);
  for (const f of columnFormats) w.int16(f);
  return w.end();
}

export function writeNotificationResponse(
  w: Writer,
  pid: number,
  channel: string,
  payload: string,
): Writer {
  return w
    .begin(BackendCode.NotificationResponse)
    .int32(pid)
    .cstring(channel)
    .cstring(payload)
    .end();
}

/**
 * NegotiateProtocolVersion: `version` is the newest supported (major << 16 | minor, e.g.
 * 196608 for 3.0), `unrecognized` the `_pq_.` options the client asked for that we ignore.
 */
export function writeNegotiateProtocolVersion(
  w: Writer,
  version: number,
  unrecognized: readonly string[],
): Writer {
  w.begin(BackendCode.NegotiateProtocolVersion).int32(version).int32(unrecognized.length);
  for (const o of unrecognized) w.cstring(o);
  return w.end();
}
