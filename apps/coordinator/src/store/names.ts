// Checks on the names the catalog stores. Node, keyspace, schema, table and column names must
// be usable as Postgres identifiers: non-empty, at most 63 bytes (NAMEDATALEN - 1), no NUL.
import { invalidArgument } from '../errors.js';

export const MAX_IDENTIFIER_BYTES = 63;

/** Returns `value` or throws INVALID_ARGUMENT naming `what` ("node name", "key column", ...). */
export function checkName(what: string, value: string): string {
  if (value === '') throw invalidArgument(`the ${what} must not be empty`);
  if (Buffer.byteLength(value, 'utf8') > MAX_IDENTIFIER_BYTES) {
    throw invalidArgument(
      `the ${what} "${value.slice(0, 20)}..." is longer than ${MAX_IDENTIFIER_BYTES} bytes`,
    );
  }
  if (value.includes('\0')) throw invalidArgument(`the ${what} must not contain a NUL character`);
  return value;
}

/** A table's schema: `public` when the request leaves it empty. */
export function checkSchemaName(value: string): string {
  return value === '' ? 'public' : checkName('schema name', value);
}

export function checkPort(what: string, port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw invalidArgument(`the ${what} must be between 1 and 65535, not ${port}`);
  }
  return port;
}
