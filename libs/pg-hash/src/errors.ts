// The one error this package throws: a key value Postgres itself would reject, carrying the
// SQLSTATE and message Postgres would send, so the router can answer exactly as a node would.

/** The SQLSTATEs a key value can fail with. */
export type KeyValueSqlState =
  /** numeric_value_out_of_range */
  | '22003'
  /** invalid_text_representation */
  | '22P02'
  /** invalid_binary_representation */
  | '22P03';

export class KeyValueError extends Error {
  override readonly name = 'KeyValueError';
  readonly code = 'KEY_VALUE_INVALID';
  readonly sqlstate: KeyValueSqlState;

  constructor(sqlstate: KeyValueSqlState, message: string) {
    super(message);
    this.sqlstate = sqlstate;
  }
}

export function outOfRange(text: string, typeName: string): KeyValueError {
  return new KeyValueError('22003', `value "${text}" is out of range for type ${typeName}`);
}

export function invalidSyntax(text: string, typeName: string): KeyValueError {
  return new KeyValueError('22P02', `invalid input syntax for type ${typeName}: "${text}"`);
}

export function invalidBinary(
  typeName: string,
  expectedBytes: number,
  gotBytes: number,
): KeyValueError {
  return new KeyValueError(
    '22P03',
    `incorrect binary data format for type ${typeName}: expected ${expectedBytes} bytes, got ${gotBytes}`,
  );
}
