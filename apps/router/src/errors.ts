// The router's typed errors. Inside, code throws a RouterError carrying a SQLSTATE and one
// sentence; only the wire edge turns it into an ErrorResponse (STYLE.md principle 9).

export const SQLSTATE = {
  featureNotSupported: '0A000',
  protocolViolation: '08P01',
  connectionFailure: '08006',
  cannotConnectNow: '57P03',
  tooManyConnections: '53300',
  invalidSqlStatementName: '26000',
  duplicatePreparedStatement: '42P05',
  duplicateCursor: '42P03',
  inFailedTransaction: '25P02',
  activeSqlTransaction: '25001',
  noActiveSqlTransaction: '25P01',
  invalidSavepoint: '3B001',
  serializationFailure: '40001',
  internalError: 'XX000',
  queryCanceled: '57014',
  adminShutdown: '57P01',
  invalidPassword: '28P01',
  invalidAuthorization: '28000',
} as const;

export class RouterError extends Error {
  override readonly name = 'RouterError';
  constructor(
    readonly sqlstate: string,
    message: string,
    /** FATAL closes the client connection after the ErrorResponse. */
    readonly severity: 'ERROR' | 'FATAL' = 'ERROR',
    readonly detail?: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** A statement the router refuses to run because it cannot answer it exactly as Postgres would. */
export function unsupported(message: string): RouterError {
  return new RouterError(SQLSTATE.featureNotSupported, message);
}

/** Bad configuration: main.ts prints the message as one sentence and exits 2. */
export { ConfigError } from '@tessera/config';

/** The SQLSTATE of anything thrown, for the wire edge: typed errors keep theirs, the rest is XX000. */
export function sqlstateOf(e: unknown): string {
  if (
    typeof e === 'object' &&
    e !== null &&
    'sqlstate' in e &&
    typeof e.sqlstate === 'string' &&
    /^[0-9A-Z]{5}$/.test(e.sqlstate)
  ) {
    return e.sqlstate;
  }
  return SQLSTATE.internalError;
}
