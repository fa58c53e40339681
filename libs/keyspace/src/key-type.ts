// The SQL names of the key types a keyspace can have (the names pg-hash and fences use), the
// aliases Postgres accepts for them, and the Postgres hash function each is sharded by.
import type { KeyType as KeyTypeName } from '@tessera/pg-hash';
import { CatalogInvalidError } from './errors.js';

export type { KeyTypeName };

export const SUPPORTED_KEY_TYPES =
  'bigint (int8), int (integer, int4), smallint (int2), text (varchar) and uuid';

const BY_NAME: ReadonlyMap<string, KeyTypeName> = new Map([
  ['bigint', 'bigint'],
  ['int8', 'bigint'],
  ['int', 'int'],
  ['integer', 'int'],
  ['int4', 'int'],
  ['smallint', 'smallint'],
  ['int2', 'smallint'],
  ['text', 'text'],
  ['varchar', 'text'],
  ['character varying', 'text'],
  ['uuid', 'uuid'],
]);

/**
 * The key type for a SQL type name as an operator or a column definition spells it (case and
 * surrounding space ignored); CatalogInvalidError for a type keys cannot have.
 */
export function parseKeyTypeName(name: string): KeyTypeName {
  const keyType = BY_NAME.get(name.trim().toLowerCase().replace(/\s+/g, ' '));
  if (keyType === undefined) {
    throw new CatalogInvalidError(
      `key type "${name}" is not supported; supported key types are ${SUPPORTED_KEY_TYPES}`,
    );
  }
  return keyType;
}

/** The Postgres function a key type hashes with: hash<type>extended(value, seed). */
export function hashFunctionName(keyType: KeyTypeName): string {
  switch (keyType) {
    case 'bigint':
      return 'hashint8extended';
    case 'int':
      return 'hashint4extended';
    case 'smallint':
      return 'hashint2extended';
    case 'text':
      return 'hashtextextended';
    case 'uuid':
      return 'uuid_hash_extended';
    default:
      return assertNever(keyType);
  }
}

function assertNever(x: never): never {
  throw new TypeError(`unknown key type ${String(x)}`);
}
