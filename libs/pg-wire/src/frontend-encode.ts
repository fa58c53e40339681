// Encoders for the messages a router sends to a Postgres node as its client. Each appends one
// frame to a Writer, so a pipeline (Parse, Bind, Describe, Execute, Sync) is built in one buffer
// and sent in one write.
import { FrontendCode, StartupCode } from './codes.js';
import { COPY_DONE, FLUSH, SSL_REQUEST, SYNC, TERMINATE } from './frames.js';
import type { Writer } from './writer.js';
import { findNul } from './body-reader.js';

/** StartupMessage for protocol 3.0 with the given parameters (user is required by servers). */
export function writeStartupMessage(
  w: Writer,
  params: Record<string, string> | Map<string, string>,
): Writer {
  w.begin().int32(StartupCode.Protocol3);
  const entries = params instanceof Map ? params.entries() : Object.entries(params);
  for (const [name, value] of entries) w.cstring(name).cstring(value);
  return w.int8(0).end();
}

export function writeSSLRequest(w: Writer): Writer {
  return w.bytes(SSL_REQUEST);
}

export function writeCancelRequest(w: Writer, pid: number, secret: number): Writer {
  return w.begin().int32(StartupCode.CancelRequest).int32(pid).int32(secret).end();
}

export function writeQuery(w: Writer, sql: string): Writer {
  return w.begin(FrontendCode.Query).cstring(sql).end();
}

/** Parse; `paramTypes` are type OIDs, 0 leaving a parameter's type to the server. */
export function writeParse(
  w: Writer,
  name: string,
  sql: string,
  paramTypes: readonly number[] = [],
): Writer {
  w.begin(FrontendCode.Parse).cstring(name).cstring(sql).int16(paramTypes.length);
  for (const oid of paramTypes) w.uint32(oid);
  return w.end();
}

export interface BindOptions {
  portal?: string;
  statement?: string;
  /** Empty = all text, one = for all, or one per parameter. */
  paramFormats?: readonly number[];
  /** Values as bytes; a string is sent as its UTF-8 text; null is SQL NULL. */
  params?: readonly (Uint8Array | string | null)[];
  resultFormats?: readonly number[];
}

export function writeBind(w: Writer, opts: BindOptions): Writer {
  const paramFormats = opts.paramFormats ?? [];
  const params = opts.params ?? [];
  const resultFormats = opts.resultFormats ?? [];
  w.begin(FrontendCode.Bind)
    .cstring(opts.portal ?? '')
    .cstring(opts.statement ?? '');
  w.int16(paramFormats.length);
  for (const f of paramFormats) w.int16(f);
  w.int16(params.length);
  for (const p of params) {
    if (p === null) {
      w.int32(-1);
    } else if (typeof p === 'string') {
      const b = Buffer.from(p, 'utf8');
      w.int32(b.length).bytes(b);
    } else {
      w.int32(p.length).bytes(p);
    }
  }
  w.int16(resultFormats.length);
  for (const f of resultFormats) w.int16(f);
  return w.end();
}

/** Describe a prepared statement ('S') or a portal ('P'). */
export function writeDescribe(w: Writer, target: 'S' | 'P', name: string): Writer {
  return w.begin(FrontendCode.Describe).int8(target.charCodeAt(0)).cstring(name).end();
}

export function writeExecute(w: Writer, portal = '', maxRows = 0): Writer {
  return w.begin(FrontendCode.Execute).cstring(portal).int32(maxRows).end();
}

/** Close a prepared statement ('S') or a portal ('P'). */
export function writeClose(w: Writer, target: 'S' | 'P', name: string): Writer {
  return w.begin(FrontendCode.Close).int8(target.charCodeAt(0)).cstring(name).end();
}

export function writeSync(w: Writer): Writer {
  return w.bytes(SYNC);
}

export function writeFlush(w: Writer): Writer {
  return w.bytes(FLUSH);
}

export function writeTerminate(w: Writer): Writer {
  return w.bytes(TERMINATE);
}

export function writePasswordMessage(w: Writer, password: string): Writer {
  return w.begin(FrontendCode.PasswordMessage).cstring(password).end();
}

/** SASLInitialResponse; `data` null sends length -1 (no initial response). */
export function writeSASLInitialResponse(
  w: Writer,
  mechanism: string,
  data: Uint8Array | string | null,
): Writer {
  w.begin(FrontendCode.PasswordMessage).cstring(mechanism);
  if (data === null) return w.int32(-1).end();
  const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return w.int32(b.length).bytes(b).end();
}

export function writeSASLResponse(w: Writer, data: Uint8Array | string): Writer {
  w.begin(FrontendCode.PasswordMessage);
  if (typeof data === 'string') w.string(data);
  else w.bytes(data);
  return w.end();
}

/** CopyData is the same in both directions. */
export function writeCopyData(w: Writer, data: Uint8Array): Writer {
  return w.begin(FrontendCode.CopyData).bytes(data).end();
}

/** One CopyData whose payload is `pieces` one after another (rows gathered for one node). */
export function writeCopyDataPieces(w: Writer, pieces: readonly Uint8Array[]): Writer {
  w.begin(FrontendCode.CopyData);
  for (const p of pieces) w.bytes(p);
  return w.end();
}

export function writeCopyDone(w: Writer): Writer {
  return w.bytes(COPY_DONE);
}

export function writeCopyFail(w: Writer, reason: string): Writer {
  return w.begin(FrontendCode.CopyFail).cstring(reason).end();
}

/**
 * The whole Bind frame whose body is `body` with its statement name replaced by `statement`
 * (ASCII): how a router forwards a client's Bind under the name it prepared the statement as.
 * Byte loops: the pieces are a few dozen bytes, where Buffer.copy's views cost more than copying.
 */
export function rewriteBindStatement(body: Buffer, statement: string): Buffer {
  const portalEnd = findNul(body, 0);
  const stmtEnd = findNul(body, portalEnd + 1);
  const nameLength = statement.length;
  const restLength = body.length - stmtEnd - 1;
  const length = 4 + portalEnd + 1 + nameLength + 1 + restLength;
  const out = Buffer.allocUnsafe(1 + length);
  out[0] = FrontendCode.Bind;
  out.writeInt32BE(length, 1);
  let at = 5;
  for (let i = 0; i <= portalEnd; i++) out[at++] = body[i]!;
  for (let i = 0; i < nameLength; i++) out[at++] = statement.charCodeAt(i);
  out[at++] = 0;
  if (restLength > 256) body.copy(out, at, stmtEnd + 1);
  else for (let i = stmtEnd + 1; i < body.length; i++) out[at++] = body[i]!;
  return out;
}
