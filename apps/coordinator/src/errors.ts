// The coordinator's typed errors. Inside, code throws a CatalogError with a stable code and one
// sentence; only the gRPC edge (grpc/edge.ts) turns it into a status (STYLE.md principle 9).

export type CatalogErrorCode =
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'INVALID_ARGUMENT'
  | 'FAILED_PRECONDITION'
  | 'UNAVAILABLE'
  | 'RESOURCE_EXHAUSTED';

export class CatalogError extends Error {
  override readonly name = 'CatalogError';
  constructor(
    readonly code: CatalogErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (message: string): CatalogError => new CatalogError('NOT_FOUND', message);
export const alreadyExists = (message: string): CatalogError =>
  new CatalogError('ALREADY_EXISTS', message);
export const invalidArgument = (message: string): CatalogError =>
  new CatalogError('INVALID_ARGUMENT', message);
export const failedPrecondition = (message: string): CatalogError =>
  new CatalogError('FAILED_PRECONDITION', message);
export const unavailable = (message: string): CatalogError =>
  new CatalogError('UNAVAILABLE', message);

/** Bad configuration: main.ts prints the message as one sentence and exits 2. */
export { ConfigError } from '@tessera/config';
