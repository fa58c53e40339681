// Typed errors of statement analysis; the router's wire edge turns them into ErrorResponse fields.

export const SQLSTATE_SYNTAX_ERROR = '42601';
export const SQLSTATE_FEATURE_NOT_SUPPORTED = '0A000';

export class SqlError extends Error {
  override readonly name = 'SqlError';
  /** Five-character SQLSTATE. */
  readonly sqlstate: string;
  /** 1-based character position in the input, like the `P` field of an ErrorResponse. */
  readonly position: number | undefined;

  constructor(sqlstate: string, message: string, position?: number) {
    super(message);
    this.sqlstate = sqlstate;
    this.position = position;
  }
}
