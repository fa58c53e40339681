// Decoders for the client messages a router looks into. Byte fields come back as views of the
// frame body (valid as long as the body is); strings are decoded because routing needs them.
import { BodyReader, skipCString, utf8Text } from './body-reader.js';
import { ProtocolError, truncated } from './errors.js';

/** Query: the SQL text. */
export function decodeQuery(body: Buffer): string {
  const nul = body.indexOf(0);
  if (nul < 0) throw truncated('Query');
  if (nul !== body.length - 1)
    throw new ProtocolError('invalid message format: trailing bytes in Query');
  return body.toString('utf8', 0, nul);
}

export interface Parse {
  /** Statement name; '' is the unnamed statement. */
  readonly name: string;
  readonly sql: string;
  /** Type OIDs the client fixed for parameters; 0 = unspecified. */
  readonly paramTypes: number[];
}

export function decodeParse(body: Buffer): Parse {
  const r = new BodyReader(body, 'Parse');
  const name = r.cstring();
  const sql = r.cstring();
  const n = r.uint16();
  if (r.remaining < n * 4) throw truncated('Parse');
  const paramTypes = new Array<number>(n);
  for (let i = 0; i < n; i++) paramTypes[i] = r.uint32();
  r.done();
  return { name, sql, paramTypes };
}

export interface Bind {
  readonly portal: string;
  readonly statement: string;
  /** As sent: empty (all text), one (applies to all), or one per parameter. */
  readonly paramFormats: number[];
  /** Views of the parameter values; null is SQL NULL. */
  readonly params: (Buffer | null)[];
  readonly resultFormats: number[];
}

export function decodeBind(body: Buffer): Bind {
  const r = new BodyReader(body, 'Bind');
  const portal = r.cstring();
  const statement = r.cstring();
  const paramFormats = readFormats(r);
  const n = r.uint16();
  checkFormatCount(paramFormats.length, n);
  const params = new Array<Buffer | null>(n);
  for (let i = 0; i < n; i++) {
    const len = r.int32();
    params[i] = len === -1 ? null : r.view(len);
  }
  const resultFormats = readFormats(r);
  r.done();
  return { portal, statement, paramFormats, params, resultFormats };
}

export interface BindParam {
  /** A view of the value, or null for SQL NULL. */
  readonly value: Buffer | null;
  /** 0 text, 1 binary. */
  readonly format: number;
}

/**
 * One parameter of a Bind, found by skipping over the others' bytes without decoding them: what
 * a router needs to read a shard key. Undefined when the Bind has no parameter `index`. Only the
 * bytes up to that parameter are checked.
 */
export function bindParam(body: Buffer, index: number): BindParam | undefined {
  const len = body.length;
  let at = skipCString(body, 0, 'Bind');
  at = skipCString(body, at, 'Bind');
  if (len - at < 2) throw truncated('Bind');
  const nFormats = body.readUInt16BE(at);
  const formatsAt = at + 2;
  at = formatsAt + nFormats * 2;
  if (len - at < 2) throw truncated('Bind');
  const nParams = body.readUInt16BE(at);
  at += 2;
  checkFormatCount(nFormats, nParams);
  if (index < 0 || index >= nParams) return undefined;
  const format =
    nFormats === 0 ? 0 : body.readInt16BE(nFormats === 1 ? formatsAt : formatsAt + index * 2);
  for (let i = 0; ; i++) {
    if (len - at < 4) throw truncated('Bind');
    const size = body.readInt32BE(at);
    at += 4;
    if (size < -1)
      throw new ProtocolError('invalid message format: negative parameter length in Bind');
    if (size > 0 && len - at < size) throw truncated('Bind');
    if (i === index) return { value: size === -1 ? null : body.subarray(at, at + size), format };
    if (size > 0) at += size;
  }
}

/** Portal name of a Bind (its first field; '' for the unnamed portal) without decoding the rest. */
export function bindPortalName(body: Buffer): string {
  return utf8Text(body, 0, skipCString(body, 0, 'Bind') - 1);
}

/** Statement name of a Bind without decoding the rest (for prepared-statement tracking). */
export function bindStatementName(body: Buffer): string {
  const at = skipCString(body, 0, 'Bind');
  const end = skipCString(body, at, 'Bind');
  return utf8Text(body, at, end - 1);
}

/** How many statement names BindStatementNames keeps: more than a driver's or a benchmark's loop. */
const BIND_NAMES_KEPT = 16;

/**
 * bindStatementName for one client's Binds, which mostly name a few statements over and over (a
 * transaction's statements, one after the other): the last names' bytes are kept, and a Bind
 * naming one again gets the same string back instead of a new one (which every Map it is looked
 * up in would hash again). The search starts at the last name found: a client repeating one
 * statement, or running its statements in order, is found in one or two comparisons.
 */
export class BindStatementNames {
  private readonly bytes: Buffer[] = [];
  private readonly names: string[] = [];
  /** Where the last name was found or put. */
  private last = 0;
  /** Where the next new name goes, round the ring. */
  private next = 0;

  of(body: Buffer): string {
    const at = skipCString(body, 0, 'Bind');
    const end = skipCString(body, at, 'Bind') - 1;
    const kept = this.bytes.length;
    for (let k = 0, i = this.last; k < kept; k++, i = i + 1 === kept ? 0 : i + 1) {
      if (sameBytes(body, at, end, this.bytes[i]!)) {
        this.last = i;
        return this.names[i]!;
      }
    }
    const name = utf8Text(body, at, end);
    const i = this.next;
    this.bytes[i] = Buffer.from(body.subarray(at, end));
    this.names[i] = name;
    this.next = i + 1 === BIND_NAMES_KEPT ? 0 : i + 1;
    this.last = i;
    return name;
  }
}

/** Whether `body[at..end)` holds the bytes of `kept`. */
function sameBytes(body: Buffer, at: number, end: number, kept: Buffer): boolean {
  if (end - at !== kept.length) return false;
  for (let i = 0; i < kept.length; i++) if (body[at + i] !== kept[i]) return false;
  return true;
}

export interface DescribeOrClose {
  /** 'S' prepared statement or 'P' portal. */
  readonly target: 'S' | 'P';
  readonly name: string;
}

export function decodeDescribe(body: Buffer): DescribeOrClose {
  return decodeTargetName(body, 'Describe');
}

export function decodeClose(body: Buffer): DescribeOrClose {
  return decodeTargetName(body, 'Close');
}

function decodeTargetName(body: Buffer, what: string): DescribeOrClose {
  const r = new BodyReader(body, what);
  const t = r.byte();
  if (t !== 0x53 && t !== 0x50) throw new ProtocolError(`invalid ${what} message subtype ${t}`);
  const name = r.cstring();
  r.done();
  return { target: t === 0x53 ? 'S' : 'P', name };
}

export interface Execute {
  readonly portal: string;
  /** 0 = no limit. */
  readonly maxRows: number;
}

export function decodeExecute(body: Buffer): Execute {
  const r = new BodyReader(body, 'Execute');
  const portal = r.cstring();
  const maxRows = r.int32();
  r.done();
  return { portal, maxRows };
}

/** PasswordMessage: the cleartext (or md5-hashed) password. */
export function decodePassword(body: Buffer): string {
  const r = new BodyReader(body, 'PasswordMessage');
  const password = r.cstring();
  r.done();
  return password;
}

export interface SASLInitialResponse {
  readonly mechanism: string;
  /** View of the initial client response; null when the client sent none (length -1). */
  readonly data: Buffer | null;
}

export function decodeSASLInitialResponse(body: Buffer): SASLInitialResponse {
  const r = new BodyReader(body, 'SASLInitialResponse');
  const mechanism = r.cstring();
  const len = r.int32();
  const data = len === -1 ? null : r.view(len);
  r.done();
  return { mechanism, data };
}

/** SASLResponse: the body is the mechanism's data, whole. */
export function decodeSASLResponse(body: Buffer): Buffer {
  return body;
}

/** CopyFail: the reason the client gave. */
export function decodeCopyFail(body: Buffer): string {
  const r = new BodyReader(body, 'CopyFail');
  const reason = r.cstring();
  r.done();
  return reason;
}

function readFormats(r: BodyReader): number[] {
  const n = r.uint16();
  if (r.remaining < n * 2) throw truncated(r.what);
  const formats = new Array<number>(n);
  for (let i = 0; i < n; i++) formats[i] = r.int16();
  return formats;
}

function checkFormatCount(nFormats: number, nParams: number): void {
  if (nFormats > 1 && nFormats !== nParams) {
    throw new ProtocolError(
      `bind message has ${nFormats} parameter formats but ${nParams} parameters`,
    );
  }
}
