// Bob Jenkins' lookup3 mixing as Postgres uses it (src/common/hashfn.c): hash_bytes_extended and
// hash_bytes_uint32_extended, on 32-bit numbers so the per-statement path allocates nothing.

/** 0x9e3779b9 + 3923095: Postgres' initial state before the key length is added. */
const INIT = (0x9e3779b9 + 3923095) | 0;

// The three lookup3 state words. Module-level so mix/final need no tuple allocation; every
// function here runs to completion before another can touch them.
let a = 0;
let b = 0;
let c = 0;

function mix(): void {
  a = (a - c) | 0;
  a ^= (c << 4) | (c >>> 28);
  c = (c + b) | 0;
  b = (b - a) | 0;
  b ^= (a << 6) | (a >>> 26);
  a = (a + c) | 0;
  c = (c - b) | 0;
  c ^= (b << 8) | (b >>> 24);
  b = (b + a) | 0;
  a = (a - c) | 0;
  a ^= (c << 16) | (c >>> 16);
  c = (c + b) | 0;
  b = (b - a) | 0;
  b ^= (a << 19) | (a >>> 13);
  a = (a + c) | 0;
  c = (c - b) | 0;
  c ^= (b << 4) | (b >>> 28);
  b = (b + a) | 0;
}

function final(): void {
  c ^= b;
  c = (c - ((b << 14) | (b >>> 18))) | 0;
  a ^= c;
  a = (a - ((c << 11) | (c >>> 21))) | 0;
  b ^= a;
  b = (b - ((a << 25) | (a >>> 7))) | 0;
  c ^= b;
  c = (c - ((b << 16) | (b >>> 16))) | 0;
  a ^= c;
  a = (a - ((c << 4) | (c >>> 28))) | 0;
  b ^= a;
  b = (b - ((a << 14) | (a >>> 18))) | 0;
  c ^= b;
  c = (c - ((b << 24) | (b >>> 8))) | 0;
}

// A seed arrives as a bigint; splitting it costs two BigInt operations, so the last split is
// kept (a keyspace hashes every key with the same seed).
let lastSeed = 0n;
let seedHi = 0;
let seedLo = 0;

function setSeed(seed: bigint): void {
  if (seed !== lastSeed) {
    const u = BigInt.asUintN(64, seed);
    seedHi = Number(u >> 32n) | 0;
    seedLo = Number(u & 0xffffffffn) | 0;
    lastSeed = seed;
  }
}

/** Postgres treats a zero seed as "no seed" and skips the extra mixing round. */
function applySeed(seed: bigint): void {
  setSeed(seed);
  if (seedHi !== 0 || seedLo !== 0) {
    a = (a + seedHi) | 0;
    b = (b + seedLo) | 0;
    mix();
  }
}

const resultView = new DataView(new ArrayBuffer(8));

/** ((uint64) b << 32) | c, read back as the signed int8 Postgres shows. */
function result(): bigint {
  resultView.setInt32(0, b);
  resultView.setInt32(4, c);
  return resultView.getBigInt64(0);
}

/** hash_bytes_uint32_extended(k, seed): what every integer hash reduces to. */
export function hashUint32Extended(k: number, seed: bigint): bigint {
  a = b = c = (INIT + 4) | 0;
  applySeed(seed);
  a = (a + k) | 0;
  final();
  return result();
}

function readUint32LE(k: Uint8Array, i: number): number {
  return k[i]! | (k[i + 1]! << 8) | (k[i + 2]! << 16) | (k[i + 3]! << 24);
}

/**
 * hash_bytes_extended(bytes, len, seed) as a little-endian server computes it (words are read
 * little-endian whatever this machine is). This is what text and uuid hash to.
 */
export function hashBytesExtended(bytes: Uint8Array, seed: bigint): bigint {
  return hashBytesPrefixExtended(bytes, bytes.length, seed);
}

/** hash_bytes_extended over the first `length` bytes, so callers can hash a reused buffer. */
export function hashBytesPrefixExtended(k: Uint8Array, length: number, seed: bigint): bigint {
  a = b = c = (INIT + length) | 0;
  applySeed(seed);
  let i = 0;
  let left = length;
  while (left >= 12) {
    a = (a + readUint32LE(k, i)) | 0;
    b = (b + readUint32LE(k, i + 4)) | 0;
    c = (c + readUint32LE(k, i + 8)) | 0;
    mix();
    i += 12;
    left -= 12;
  }
  // The last 0..11 bytes, little-endian; the low byte of c stays free, as in lookup3.
  if (left >= 8) {
    a = (a + readUint32LE(k, i)) | 0;
    b = (b + readUint32LE(k, i + 4)) | 0;
    if (left > 8) c = (c + (k[i + 8]! << 8)) | 0;
    if (left > 9) c = (c + (k[i + 9]! << 16)) | 0;
    if (left > 10) c = (c + (k[i + 10]! << 24)) | 0;
  } else if (left >= 4) {
    a = (a + readUint32LE(k, i)) | 0;
    if (left > 4) b = (b + k[i + 4]!) | 0;
    if (left > 5) b = (b + (k[i + 5]! << 8)) | 0;
    if (left > 6) b = (b + (k[i + 6]! << 16)) | 0;
  } else {
    if (left > 0) a = (a + k[i]!) | 0;
    if (left > 1) a = (a + (k[i + 1]! << 8)) | 0;
    if (left > 2) a = (a + (k[i + 2]! << 16)) | 0;
  }
  final();
  return result();
}
