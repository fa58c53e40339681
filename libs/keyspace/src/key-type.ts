// Between the catalog's KeyType enum and the SQL names pg-hash and fences use, and the
// Postgres hash function each key type is sharded by.
import { KeyType } from '@tessera/proto';
import type { KeyType as KeyTypeName } from '@tessera/pg-hash';
import { CatalogInvalidError } from './errors.js';

export type { KeyTypeName };

const SUPPORTED = 'bigint (int8), int (integer, int4), smallint (int2), text (varchar) and uuid';

/** The SQL name of a catalog key type; CatalogInvalidError for UNSPECIFIED or an unknown value. */
export function keyTypeName(keyType: KeyType): KeyTypeName {
  switch (keyType) {
    case KeyType.BIGINT:
      return 'bigint';
    case KeyType.INT:
      return 'int';
    case KeyType.SMALLINT:
      return 'smallint';
    case KeyType.TEXT:
      return 'text';
    case KeyType.UUID:
      return 'uuid';
    case KeyType.UNSPECIFIED:
      throw new CatalogInvalidError(
        `key type is unspecified; supported key types are ${SUPPORTED}`,
      );
    default:
      throw new CatalogInvalidError(
        `key type ${String(keyType)} is unknown; supported key types are ${SUPPORTED}`,
      );
  }
}

const BY_NAME: ReadonlyMap<string, KeyType> = new Map([
  ['bigint', KeyType.BIGINT],
  ['int8', KeyType.BIGINT],
  ['int', KeyType.INT],
  ['integer', KeyType.INT],
  ['int4', KeyType.INT],
  ['smallint', KeyType.SMALLINT],
  ['int2', KeyType.SMALLINT],
  ['text', KeyType.TEXT],
  ['varchar', KeyType.TEXT],
  ['character varying', KeyType.TEXT],
  ['uuid', KeyType.UUID],
]);

/**
 * The catalog key type for a SQL type name as an operator or a column definition spells it
 * (case and surrounding space ignored); CatalogInvalidError for a type keys cannot have.
 */
export function parseKeyType(name: string): KeyType {
  const keyType = BY_NAME.get(name.trim().toLowerCase().replace(/\s+/g, ' '));
  if (keyType === undefined) {
    throw new CatalogInvalidError(
      `key type "${name}" is not supported; supported key types are ${SUPPORTED}`,
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
