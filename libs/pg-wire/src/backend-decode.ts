// Decoders for server messages: the ones routing needs (ReadyForQuery, auth, key data) and the
// ones the router merges across nodes (RowDescription, DataRow, CommandComplete).
import { BodyReader } from './body-reader.js';
import { AuthCode, type TransactionStatus } from './codes.js';
import { ProtocolError, truncated } from './errors.js';

/** ReadyForQuery: 'I' idle, 'T' in a transaction block, 'E' in a failed one. */
export function decodeReadyForQuery(body: Buffer): TransactionStatus {
  return readyForQueryStatus(body.length + 5, body[0] ?? -1);
}

/**
 * ReadyForQuery's status from its frame's whole size and its status byte (for a reader that
 * does not make a body view: FrameReader.nextCode).
 */
export function readyForQueryStatus(frameSize: number, statusByte: number): TransactionStatus {
  if (frameSize !== 6)
    throw new ProtocolError('invalid message format: ReadyForQuery must have 1 byte');
  switch (statusByte) {
    case 0x49:
      return 'I';
    case 0x54:
      return 'T';
    case 0x45:
      return 'E';
    default:
      throw new ProtocolError(`invalid transaction status ${statusByte} in ReadyForQuery`);
  }
}

export interface ParameterStatus {
  readonly name: string;
  readonly value: string;
}

export function decodeParameterStatus(body: Buffer): ParameterStatus {
  const r = new BodyReader(body, 'ParameterStatus');
  const name = r.cstring();
  const value = r.cstring();
  r.done();
  return { name, value };
}

export interface BackendKeyData {
  readonly pid: number;
  readonly secret: number;
}

export function decodeBackendKeyData(body: Buffer): BackendKeyData {
  const r = new BodyReader(body, 'BackendKeyData');
  const pid = r.int32();
  const secret = r.int32();
  r.done();
  return { pid, secret };
}

export type Authentication =
  | { readonly type: 'Ok' }
  | { readonly type: 'CleartextPassword' }
  | { readonly type: 'MD5Password'; readonly salt: Buffer }
  | { readonly type: 'SASL'; readonly mechanisms: string[] }
  | { readonly type: 'SASLContinue'; readonly data: Buffer }
  | { readonly type: 'SASLFinal'; readonly data: Buffer }
  /** Kerberos, GSS, SSPI: a router does not speak them; it only needs to say so. */
  | { readonly type: 'Unsupported'; readonly code: number; readonly data: Buffer };

export function decodeAuthentication(body: Buffer): Authentication {
  const r = new BodyReader(body, 'Authentication');
  const code = r.int32();
  switch (code) {
    case AuthCode.Ok:
      r.done();
      return { type: 'Ok' };
    case AuthCode.CleartextPassword:
      r.done();
      return { type: 'CleartextPassword' };
    case AuthCode.MD5Password: {
      const salt = r.view(4);
      r.done();
      return { type: 'MD5Password', salt };
    }
    case AuthCode.SASL: {
      const mechanisms: string[] = [];
      while (true) {
        const m = r.cstring();
        if (m === '') break;
        mechanisms.push(m);
      }
      r.done();
      return { type: 'SASL', mechanisms };
    }
    case AuthCode.SASLContinue:
      return { type: 'SASLContinue', data: r.rest() };
    case AuthCode.SASLFinal:
      return { type: 'SASLFinal', data: r.rest() };
    default:
      return { type: 'Unsupported', code, data: r.rest() };
  }
}

/** CommandComplete: the command tag, e.g. "SELECT 3", "INSERT 0 1", "BEGIN". */
export function decodeCommandComplete(body: Buffer): string {
  const nul = body.indexOf(0);
  if (nul < 0) throw truncated('CommandComplete');
  if (nul !== body.length - 1)
    throw new ProtocolError('invalid message format: trailing bytes in CommandComplete');
  return body.toString('utf8', 0, nul);
}

/**
 * The row count in a command tag (the last word of INSERT, UPDATE, DELETE, SELECT, MERGE, MOVE,
 * FETCH, COPY tags), or undefined for tags without one.
 */
export function commandRowCount(tag: string): number | undefined {
  const sp = tag.lastIndexOf(' ');
  if (sp < 0) return undefined;
  switch (tag.slice(0, tag.indexOf(' '))) {
    case 'INSERT':
    case 'UPDATE':
    case 'DELETE':
    case 'SELECT':
    case 'MERGE':
    case 'MOVE':
    case 'FETCH':
    case 'COPY':
      break;
    default:
      return undefined;
  }
  const n = Number(tag.slice(sp + 1));
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

export interface FieldDescription {
  readonly name: string;
  /** OID of the source table, or 0. */
  readonly tableOid: number;
  /** Attribute number of the source column, or 0. */
  readonly columnAttr: number;
  readonly typeOid: number;
  /** pg_type.typlen; negative for variable width. */
  readonly typeSize: number;
  readonly typeModifier: number;
  /** 0 text, 1 binary. */
  readonly format: number;
}

export function decodeRowDescription(body: Buffer): FieldDescription[] {
  const r = new BodyReader(body, 'RowDescription');
  const n = r.uint16();
  const fields = new Array<FieldDescription>(n);
  for (let i = 0; i < n; i++) {
    const name = r.cstring();
    const tableOid = r.uint32();
    const columnAttr = r.int16();
    const typeOid = r.uint32();
    const typeSize = r.int16();
    const typeModifier = r.int32();
    const format = r.int16();
    fields[i] = { name, tableOid, columnAttr, typeOid, typeSize, typeModifier, format };
  }
  r.done();
  return fields;
}

/** DataRow: each column as a view of the body, null for SQL NULL. Nothing is copied. */
export function decodeDataRow(body: Buffer): (Buffer | null)[] {
  const len = body.length;
  if (len < 2) throw truncated('DataRow');
  const n = body.readUInt16BE(0);
  const columns = new Array<Buffer | null>(n);
  let at = 2;
  for (let i = 0; i < n; i++) {
    if (len - at < 4) throw truncated('DataRow');
    const size = body.readInt32BE(at);
    at += 4;
    if (size === -1) {
      columns[i] = null;
      continue;
    }
    if (size < 0)
      throw new ProtocolError('invalid message format: negative column length in DataRow');
    if (len - at < size) throw truncated('DataRow');
    columns[i] = body.subarray(at, at + size);
    at += size;
  }
  if (at !== len) throw new ProtocolError('invalid message format: trailing bytes in DataRow');
  return columns;
}

/** ParameterDescription: the parameter type OIDs of a prepared statement. */
export function decodeParameterDescription(body: Buffer): number[] {
  const r = new BodyReader(body, 'ParameterDescription');
  const n = r.uint16();
  if (r.remaining < n * 4) throw truncated('ParameterDescription');
  const oids = new Array<number>(n);
  for (let i = 0; i < n; i++) oids[i] = r.uint32();
  r.done();
  return oids;
}

export interface NotificationResponse {
  readonly pid: number;
  readonly channel: string;
  readonly payload: string;
}

export function decodeNotificationResponse(body: Buffer): NotificationResponse {
  const r = new BodyReader(body, 'NotificationResponse');
  const pid = r.int32();
  const channel = r.cstring();
  const payload = r.cstring();
  r.done();
  return { pid, channel, payload };
}

export interface CopyResponse {
  /** 0 text, 1 binary: the overall COPY format. */
  readonly format: number;
  readonly columnFormats: number[];
}

/** CopyInResponse, CopyOutResponse and CopyBothResponse share this body. */
export function decodeCopyResponse(body: Buffer): CopyResponse {
  const r = new BodyReader(body, 'CopyResponse');
  const format = r.byte();
  const n = r.uint16();
  if (r.remaining < n * 2) throw truncated('CopyResponse');
  const columnFormats = new Array<number>(n);
  for (let i = 0; i < n; i++) columnFormats[i] = r.int16();
  r.done();
  return { format, columnFormats };
}

export interface NegotiateProtocolVersion {
  /** Newest version the server supports for the requested major (major << 16 | minor). */
  readonly version: number;
  /** Requested `_pq_.` options it did not recognize. */
  readonly unrecognized: string[];
}

export function decodeNegotiateProtocolVersion(body: Buffer): NegotiateProtocolVersion {
  const r = new BodyReader(body, 'NegotiateProtocolVersion');
  const version = r.int32();
  const n = r.int32();
  if (n < 0 || n > r.remaining) throw truncated('NegotiateProtocolVersion');
  const unrecognized = new Array<string>(n);
  for (let i = 0; i < n; i++) unrecognized[i] = r.cstring();
  r.done();
  return { version, unrecognized };
}
