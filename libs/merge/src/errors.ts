// Typed errors of merging: a stable SQLSTATE and Postgres-style message, turned into an
// ErrorResponse by the router's wire edge. Node errors are not wrapped: they propagate as thrown.

export const SQLSTATE_FEATURE_NOT_SUPPORTED = '0A000';
export const SQLSTATE_NUMERIC_VALUE_OUT_OF_RANGE = '22003';
export const SQLSTATE_INVALID_ROW_COUNT_IN_LIMIT = '2201W';
export const SQLSTATE_INVALID_ROW_COUNT_IN_OFFSET = '2201X';
export const SQLSTATE_INVALID_TEXT_REPRESENTATION = '22P02';
export const SQLSTATE_INTERNAL_ERROR = 'XX000';

export class MergeError extends Error {
  override readonly name = 'MergeError';
  readonly sqlstate: string;

  constructor(sqlstate: string, message: string) {
    super(message);
    this.sqlstate = sqlstate;
  }
}

/** A refusal discovered at run time (a type that cannot be merged exactly): SQLSTATE 0A000. */
export function unsupported(message: string): MergeError {
  return new MergeError(SQLSTATE_FEATURE_NOT_SUPPORTED, message);
}

export function internal(message: string): MergeError {
  return new MergeError(SQLSTATE_INTERNAL_ERROR, message);
}
