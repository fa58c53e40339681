// uuid input as Postgres 15's uuid_in reads it: 32 hex digits, optionally braced, with an
// optional hyphen after any group of four; and uuid_hash_extended, the hash of its 16 bytes.
import { invalidBinary, invalidSyntax } from './errors.js';
import { hashBytesExtended } from './jenkins.js';

const UUID_LEN = 16;

function hexValue(ch: number): number {
  if (ch >= 0x30 && ch <= 0x39) return ch - 0x30;
  const lower = ch | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Fills `out` (16 bytes) with the uuid a text reads as, or throws KeyValueError. */
export function parseUuidInto(text: string, out: Uint8Array): void {
  let i = 0;
  const braces = text.charCodeAt(0) === 0x7b;
  if (braces) i++;
  for (let byte = 0; byte < UUID_LEN; byte++) {
    const high = hexValue(text.charCodeAt(i));
    const low = hexValue(text.charCodeAt(i + 1));
    if (high < 0 || low < 0) throw invalidSyntax(text, 'uuid');
    out[byte] = (high << 4) | low;
    i += 2;
    if (text.charCodeAt(i) === 0x2d && byte % 2 === 1 && byte < UUID_LEN - 1) i++;
  }
  if (braces) {
    if (text.charCodeAt(i) !== 0x7d) throw invalidSyntax(text, 'uuid');
    i++;
  }
  if (i !== text.length) throw invalidSyntax(text, 'uuid');
}

/** The 16 bytes of a uuid text, or KeyValueError. */
export function parseUuid(text: string): Uint8Array {
  const out = new Uint8Array(UUID_LEN);
  parseUuidInto(text, out);
  return out;
}

const scratch = new Uint8Array(UUID_LEN);

/** uuid_hash_extended(u, seed) for a uuid in text form or as its 16 bytes. */
export function hashUuidExtended(u: string | Uint8Array, seed: bigint): bigint {
  if (typeof u === 'string') {
    parseUuidInto(u, scratch);
    return hashBytesExtended(scratch, seed);
  }
  if (u.length !== UUID_LEN) throw invalidBinary('uuid', UUID_LEN, u.length);
  return hashBytesExtended(u, seed);
}
