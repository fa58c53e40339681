// Postgres-compatible extended hash functions: what hash<type>extended(value, seed) returns on
// a Postgres 15 server, computed in TypeScript for routing (DESIGN.md section 2, "Hash").
export { hashBytesExtended } from './jenkins.js';
export { hashInt2Extended, hashInt4Extended, hashInt8Extended } from './int-hash.js';
export { hashTextExtended } from './text-hash.js';
export { hashUuidExtended } from './uuid.js';
export { hashKeyText, hashKeyUtf8, hashKeyBinary, type KeyType } from './key.js';
export { KeyValueError, type KeyValueSqlState } from './errors.js';
