// The gRPC edge: the only place the coordinator's typed errors become statuses. Each service is
// registered through serve(), which wraps every handler so that a CatalogError keeps its code and
// sentence, a refused catalog (CatalogInvalidError) is FAILED_PRECONDITION, and anything
// unexpected is logged and answered INTERNAL without taking the process down.
import type * as grpc from '@grpc/grpc-js';
import {
  Code,
  RpcError,
  addService,
  type AddServiceOptions,
  type CallContext,
  type DescService,
  type ServiceImpl,
} from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import { CatalogError, type CatalogErrorCode } from '../errors.js';
import { translatePgError } from '../store/db.js';

const CODES: Record<CatalogErrorCode, Code> = {
  NOT_FOUND: Code.NOT_FOUND,
  ALREADY_EXISTS: Code.ALREADY_EXISTS,
  INVALID_ARGUMENT: Code.INVALID_ARGUMENT,
  FAILED_PRECONDITION: Code.FAILED_PRECONDITION,
  UNAVAILABLE: Code.UNAVAILABLE,
  RESOURCE_EXHAUSTED: Code.RESOURCE_EXHAUSTED,
};

/** The status a handler's failure is answered with. */
export function toStatus(error: unknown, log: Logger, ctx: CallContext): RpcError {
  if (error instanceof RpcError) return error;
  const e = translatePgError(error);
  if (e instanceof CatalogError) return new RpcError(CODES[e.code], e.message);
  // @tessera/keyspace's validation error: the change would leave the catalog invalid.
  if (e instanceof Error && (e as { code?: unknown }).code === 'CATALOG_INVALID') {
    return new RpcError(
      Code.FAILED_PRECONDITION,
      `refused, the catalog would become invalid: ${e.message}`,
    );
  }
  log.error(
    { err: e, service: ctx.service, method: ctx.method },
    'unexpected error in a gRPC handler',
  );
  return new RpcError(
    Code.INTERNAL,
    `internal error: ${e instanceof Error ? e.message : String(e)}`,
  );
}

type AnyFn = (input: unknown, ctx: CallContext) => unknown;

/** addService with every handler's failures converted by toStatus. */
export function serve<S extends DescService>(
  server: grpc.Server,
  service: S,
  impl: ServiceImpl<S>,
  log: Logger,
  opts: AddServiceOptions,
): void {
  const fns = impl as unknown as Record<string, AnyFn>;
  const wrapped: Record<string, AnyFn> = {};
  for (const method of service.methods) {
    const fn = fns[method.localName];
    if (typeof fn !== 'function') continue;
    const bound = fn.bind(impl);
    switch (method.methodKind) {
      case 'unary':
      case 'client_streaming':
        wrapped[method.localName] = async (input, ctx) => {
          try {
            return await bound(input, ctx);
          } catch (e) {
            throw toStatus(e, log, ctx);
          }
        };
        break;
      case 'server_streaming':
      case 'bidi_streaming':
        wrapped[method.localName] = async function* (input, ctx) {
          try {
            yield* bound(input, ctx) as AsyncIterable<unknown>;
          } catch (e) {
            throw toStatus(e, log, ctx);
          }
        };
        break;
    }
  }
  addService(server, service, wrapped as unknown as ServiceImpl<S>, opts);
}
