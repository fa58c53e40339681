// The one error type that crosses the gRPC edge: a status code plus the message the peer sees.
// Handlers throw it; clients reject with it.
import * as grpc from '@grpc/grpc-js';

/** gRPC status codes (grpc-js' `status` enum): `Code.NOT_FOUND`, `Code.UNAUTHENTICATED`, ... */
export const Code = grpc.status;
export type Code = grpc.status;

/** The status name of a code, e.g. `"NOT_FOUND"`; used as a metrics label. */
export function codeName(code: Code): string {
  return Code[code] ?? `CODE_${code}`;
}

/**
 * A gRPC status. `details` is the message the peer sees (grpc-js reads `code`, `details` and
 * `metadata` off a thrown error), `message` is the same text.
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  readonly code: Code;
  readonly details: string;
  readonly metadata: grpc.Metadata | undefined;

  constructor(code: Code, message: string, metadata?: grpc.Metadata) {
    super(message);
    this.code = code;
    this.details = message;
    this.metadata = metadata;
  }

  /** `"NOT_FOUND: no such node"`. */
  override toString(): string {
    return `${codeName(this.code)}: ${this.details}`;
  }
}

/**
 * Turns anything a handler threw into the status sent back: an RpcError as it is, anything else as
 * INTERNAL with its message (so the peer learns what broke, and nothing crashes).
 */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof Error) return new RpcError(Code.INTERNAL, error.message || error.name);
  return new RpcError(Code.INTERNAL, String(error));
}

/** Turns a grpc-js client error (a ServiceError) into an RpcError with the server's message. */
export function fromServiceError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (isServiceError(error)) return new RpcError(error.code, error.details, error.metadata);
  return toRpcError(error);
}

function isServiceError(error: unknown): error is grpc.ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<grpc.ServiceError>).code === 'number' &&
    typeof (error as Partial<grpc.ServiceError>).details === 'string'
  );
}
