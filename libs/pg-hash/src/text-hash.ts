// hashtextextended under a deterministic collation: hash_bytes_extended of the value's UTF-8
// bytes. Strings are encoded once into a reused buffer; nothing is allocated for usual keys.
import { hashBytesExtended, hashBytesPrefixExtended } from './jenkins.js';

/** Keys up to this many UTF-16 units are encoded by hand (cheaper than a call into C++). */
const SHORT_KEY_UNITS = 128;
/** Longer keys use TextEncoder into a buffer kept up to this size; beyond it, one-off buffers. */
const MAX_KEPT_BYTES = 64 * 1024;

const encoder = new TextEncoder();
let buffer = new Uint8Array(SHORT_KEY_UNITS * 3);

/**
 * UTF-8 of s[0..] into buffer (which holds 3 bytes per unit), returning the length. Lone
 * surrogates become U+FFFD, as TextEncoder makes them.
 */
function encodeShort(s: string, out: Uint8Array): number {
  let n = 0;
  const len = s.length;
  for (let i = 0; i < len; i++) {
    let cp = s.charCodeAt(i);
    if (cp < 0x80) {
      out[n++] = cp;
      continue;
    }
    if (cp < 0x800) {
      out[n++] = 0xc0 | (cp >> 6);
      out[n++] = 0x80 | (cp & 0x3f);
      continue;
    }
    if (cp >= 0xd800 && cp <= 0xdfff) {
      const next = i + 1 < len ? s.charCodeAt(i + 1) : 0;
      if (cp <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (next - 0xdc00);
        i++;
        out[n++] = 0xf0 | (cp >> 18);
        out[n++] = 0x80 | ((cp >> 12) & 0x3f);
        out[n++] = 0x80 | ((cp >> 6) & 0x3f);
        out[n++] = 0x80 | (cp & 0x3f);
        continue;
      }
      cp = 0xfffd;
    }
    out[n++] = 0xe0 | (cp >> 12);
    out[n++] = 0x80 | ((cp >> 6) & 0x3f);
    out[n++] = 0x80 | (cp & 0x3f);
  }
  return n;
}

/** hashtextextended(s, seed) for text in a deterministic collation; bytes are taken as UTF-8. */
export function hashTextExtended(s: string | Uint8Array, seed: bigint): bigint {
  if (typeof s !== 'string') return hashBytesExtended(s, seed);
  if (s.length <= SHORT_KEY_UNITS)
    return hashBytesPrefixExtended(buffer, encodeShort(s, buffer), seed);
  const worstCase = s.length * 3;
  if (worstCase > MAX_KEPT_BYTES) return hashBytesExtended(encoder.encode(s), seed);
  if (buffer.length < worstCase) {
    buffer = new Uint8Array(Math.min(MAX_KEPT_BYTES, Math.max(worstCase, buffer.length * 2)));
  }
  const { written } = encoder.encodeInto(s, buffer);
  return hashBytesPrefixExtended(buffer, written, seed);
}
