// SCRAM-SHA-256 (RFC 5802, RFC 7677) building blocks shared by the server and client roles:
// the key derivation, the stored verifier format of pg_authid.rolpassword, and the parsing of
// `k=v,k=v` messages. node:crypto only.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { saslprep } from './saslprep.js';

export const SCRAM_SHA_256 = 'SCRAM-SHA-256';
/** Postgres' default (scram_iterations in 16+; fixed in 15). */
export const DEFAULT_SCRAM_ITERATIONS = 4096;
const SALT_BYTES = 16;
/** Random bytes in a nonce; Postgres uses 18 (24 base64 characters). */
export const NONCE_BYTES = 18;

/**
 * A SASL failure. `sqlstate` is 28P01 (invalid_password) for a wrong proof and 08P01
 * (protocol_violation) for a malformed exchange, as Postgres reports them.
 */
export class ScramError extends Error {
  override readonly name = 'ScramError';
  constructor(
    message: string,
    readonly sqlstate: string = '08P01',
  ) {
    super(message);
  }
}

export interface ScramVerifier {
  readonly iterations: number;
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

export function hmac(key: Buffer, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

export function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

export function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) ^ (b[i] as number);
  return out;
}

/** Hi() of RFC 5802, which is PBKDF2-HMAC-SHA-256 over the SASLprep'ed password. */
export function saltedPassword(password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(saslprep(password), salt, iterations, 32, 'sha256');
}

/** The keys of a verifier from a password, as Postgres computes them at CREATE/ALTER ROLE. */
export function deriveScramVerifier(
  password: string,
  salt: Buffer,
  iterations: number,
): ScramVerifier {
  const salted = saltedPassword(password, salt, iterations);
  return {
    iterations,
    salt,
    storedKey: sha256(hmac(salted, 'Client Key')),
    serverKey: hmac(salted, 'Server Key'),
  };
}

/**
 * A verifier string for a plain-text password, the same format Postgres stores:
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64 parts).
 */
export function createScramVerifier(
  password: string,
  opts: { iterations?: number; salt?: Buffer } = {},
): string {
  const v = deriveScramVerifier(
    password,
    opts.salt ?? randomBytes(SALT_BYTES),
    opts.iterations ?? DEFAULT_SCRAM_ITERATIONS,
  );
  return formatScramVerifier(v);
}

export function formatScramVerifier(v: ScramVerifier): string {
  return `${SCRAM_SHA_256}$${v.iterations}:${v.salt.toString('base64')}$${v.storedKey.toString('base64')}:${v.serverKey.toString('base64')}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Base64 decoding that refuses what Buffer.from would silently skip (junk after padding, ...). */
export function fromBase64(text: string): Buffer | undefined {
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** Parses a stored verifier; undefined if the string is not one (e.g. an md5 hash). */
export function parseScramVerifier(text: string): ScramVerifier | undefined {
  const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(text);
  if (!m) return undefined;
  const [, iter, salt, stored, server] = m as unknown as [string, string, string, string, string];
  const iterations = Number(iter);
  if (!Number.isSafeInteger(iterations) || iterations < 1) return undefined;
  const saltBytes = fromBase64(salt);
  const storedKey = fromBase64(stored);
  const serverKey = fromBase64(server);
  if (!saltBytes || storedKey?.length !== 32 || serverKey?.length !== 32) return undefined;
  return { iterations, salt: saltBytes, storedKey, serverKey };
}

/**
 * A stand-in verifier for a user that does not exist, so the exchange runs to its (failing)
 * end and looks the same as for a real user: the salt is derived from the name and a secret of
 * the router, so it is stable across attempts, as Postgres' mock authentication does.
 */
export function mockScramVerifier(username: string, secret: Buffer): ScramVerifier {
  const salt = sha256(Buffer.concat([secret, Buffer.from(username, 'utf8')])).subarray(
    0,
    SALT_BYTES,
  );
  return {
    iterations: DEFAULT_SCRAM_ITERATIONS,
    salt,
    storedKey: randomBytes(32),
    serverKey: randomBytes(32),
  };
}

export function newNonce(): string {
  return randomBytes(NONCE_BYTES).toString('base64');
}

/**
 * Splits `a=1,b=2` into attributes in order. Values may contain '=' (base64 padding) but not
 * ','. Throws ScramError on a part without `x=`.
 */
export function parseAttributes(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const part of text.split(',')) {
    if (part.length < 2 || part[1] !== '=')
      throw new ScramError(`malformed SCRAM message: "${part}"`);
    out.push([part[0] as string, part.slice(2)]);
  }
  return out;
}

/** Whether `s` is a valid printable nonce (RFC 5802: printable ASCII except ','). */
export function isPrintable(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || c === 0x2c) return false;
  }
  return true;
}
