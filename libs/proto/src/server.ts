// Serving a protobuf-es service descriptor on a grpc-js server: one handler per method, each
// decoding, authorizing, calling the implementation, and turning whatever it throws into a status.
import * as grpc from '@grpc/grpc-js';
import type {
  DescMessage,
  DescMethod,
  DescService,
  MessageInitShape,
  MessageShape,
} from '@bufbuild/protobuf';
import { decodeRequest, encode } from './codec.js';
import { methodDefinition } from './method-definition.js';
import { Code, RpcError, codeName, toRpcError } from './errors.js';
import { readAll, writeAll } from './server-streams.js';

/** What a handler knows about its call. */
export interface CallContext {
  readonly metadata: grpc.Metadata;
  readonly peer: string;
  /** Aborted when the client cancels the call (or its deadline passes). */
  readonly signal: AbortSignal;
  /** The method's proto name, e.g. `GetCatalog`. */
  readonly method: string;
  /** The service's full name, e.g. `tessera.v1.CatalogService`. */
  readonly service: string;
}

export type UnaryImpl<I extends DescMessage, O extends DescMessage> = (
  req: MessageShape<I>,
  ctx: CallContext,
) => Promise<MessageInitShape<O>> | MessageInitShape<O>;
/** Each item is written as it comes; the call ends when the iterable ends. */
export type ServerStreamingImpl<I extends DescMessage, O extends DescMessage> = (
  req: MessageShape<I>,
  ctx: CallContext,
) => AsyncIterable<MessageInitShape<O>>;
export type ClientStreamingImpl<I extends DescMessage, O extends DescMessage> = (
  reqs: AsyncIterable<MessageShape<I>>,
  ctx: CallContext,
) => Promise<MessageInitShape<O>>;
export type BidiStreamingImpl<I extends DescMessage, O extends DescMessage> = (
  reqs: AsyncIterable<MessageShape<I>>,
  ctx: CallContext,
) => AsyncIterable<MessageInitShape<O>>;

/** The handler type for one method descriptor, chosen by its `methodKind`. */
export type MethodImpl<M extends DescMethod> = M extends {
  methodKind: 'unary';
  input: infer I extends DescMessage;
  output: infer O extends DescMessage;
}
  ? UnaryImpl<I, O>
  : M extends {
        methodKind: 'server_streaming';
        input: infer I extends DescMessage;
        output: infer O extends DescMessage;
      }
    ? ServerStreamingImpl<I, O>
    : M extends {
          methodKind: 'client_streaming';
          input: infer I extends DescMessage;
          output: infer O extends DescMessage;
        }
      ? ClientStreamingImpl<I, O>
      : M extends {
            methodKind: 'bidi_streaming';
            input: infer I extends DescMessage;
            output: infer O extends DescMessage;
          }
        ? BidiStreamingImpl<I, O>
        : // a descriptor built at run time (from a registry): any handler shape, checked by methodKind at run time
          | UnaryImpl<DescMessage, DescMessage>
          | ServerStreamingImpl<DescMessage, DescMessage>
          | ClientStreamingImpl<DescMessage, DescMessage>
          | BidiStreamingImpl<DescMessage, DescMessage>;

/** One handler per method, keyed by the method's localName (`getCatalog`). */
export type ServiceImpl<S extends DescService> = {
  [K in keyof S['method']]: MethodImpl<S['method'][K]>;
};

/** Reported once per call when it ends, whichever way. */
export interface CallInfo {
  service: string;
  method: string;
  /** Status name: `OK`, `NOT_FOUND`, `CANCELLED`, ... */
  code: string;
  seconds: number;
}
export type ServerCallHook = (info: CallInfo) => void;
/** Runs before the request is decoded and the handler called; throw an RpcError to refuse. */
export type Authorize = (ctx: CallContext) => void | Promise<void>;

export interface AddServiceOptions {
  authorize?: Authorize;
  /** E.g. `({ service, method, code, seconds }) => m.observe(service, method, code, seconds)`. */
  onCallEnd?: ServerCallHook;
}

/**
 * Registers `impl` for `service` on `server`. A method missing from `impl` answers UNIMPLEMENTED.
 * A thrown RpcError becomes that status; anything else thrown becomes INTERNAL with its message.
 */
export function addService<S extends DescService>(
  server: grpc.Server,
  service: S,
  impl: ServiceImpl<S>,
  opts: AddServiceOptions = {},
): void {
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  const fns = impl as Record<string, unknown>;
  for (const method of service.methods) {
    definition[method.name] = methodDefinition(method);
    const fn = fns[method.localName];
    if (typeof fn === 'function')
      handlers[method.name] = makeHandler(method, fn.bind(impl) as HandlerFn, opts);
  }
  server.addService(definition, handlers);
}

// The implementation seen without its per-method types; makeHandler restores them by methodKind.
type HandlerFn = (input: unknown, ctx: CallContext) => unknown;

interface Call extends NodeJS.EventEmitter {
  readonly metadata: grpc.Metadata;
  readonly cancelled: boolean;
  getPeer(): string;
}

function makeHandler(
  method: DescMethod,
  fn: HandlerFn,
  opts: AddServiceOptions,
): grpc.UntypedHandleCall {
  const begin = (call: Call): { ctx: CallContext; end: (code: Code) => void } => {
    const started = performance.now();
    const controller = new AbortController();
    const cancel = (): void =>
      controller.abort(new RpcError(Code.CANCELLED, 'the client cancelled the call'));
    if (call.cancelled) cancel();
    else call.once('cancelled', cancel);
    const ctx: CallContext = {
      metadata: call.metadata,
      peer: call.getPeer(),
      signal: controller.signal,
      method: method.name,
      service: method.parent.typeName,
    };
    let ended = false;
    const end = (code: Code): void => {
      if (ended) return;
      ended = true;
      call.off('cancelled', cancel);
      if (!opts.onCallEnd) return;
      const info = {
        service: ctx.service,
        method: ctx.method,
        code: codeName(code),
        seconds: (performance.now() - started) / 1000,
      };
      try {
        opts.onCallEnd(info);
      } catch {
        // a broken metrics hook must not break the call
      }
    };
    return { ctx, end };
  };
  const authorize = async (ctx: CallContext): Promise<void> => {
    if (opts.authorize) await opts.authorize(ctx);
  };

  // Unary and client-streaming calls answer once: the handler's message, or its error as a status.
  const answerOnce = async (
    callback: grpc.sendUnaryData<Buffer>,
    ctx: CallContext,
    end: (code: Code) => void,
    produce: () => Promise<unknown>,
  ): Promise<void> => {
    try {
      const res = await produce();
      callback(null, encode(method.output, res as MessageInitShape<DescMessage>));
      end(Code.OK);
    } catch (e) {
      const err = toRpcError(e);
      callback(err);
      end(ctx.signal.aborted ? Code.CANCELLED : err.code);
    }
  };

  switch (method.methodKind) {
    case 'unary':
      return (async (
        call: grpc.ServerUnaryCall<Buffer, Buffer>,
        callback: grpc.sendUnaryData<Buffer>,
      ) => {
        const { ctx, end } = begin(call);
        await answerOnce(callback, ctx, end, async () => {
          await authorize(ctx);
          return fn(decodeRequest(method.input, call.request), ctx);
        });
      }) satisfies grpc.handleUnaryCall<Buffer, Buffer>;
    case 'server_streaming':
      return (async (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
        const { ctx, end } = begin(call);
        try {
          await authorize(ctx);
          const req = decodeRequest(method.input, call.request);
          const out = fn(req, ctx) as AsyncIterable<MessageInitShape<DescMessage>>;
          await writeAll(out, call, method.output, ctx.signal);
          finishStream(call, ctx, end);
        } catch (e) {
          failStream(call, ctx, end, e);
        }
      }) satisfies grpc.handleServerStreamingCall<Buffer, Buffer>;
    case 'client_streaming':
      return (async (
        call: grpc.ServerReadableStream<Buffer, Buffer>,
        callback: grpc.sendUnaryData<Buffer>,
      ) => {
        const { ctx, end } = begin(call);
        await answerOnce(callback, ctx, end, async () => {
          await authorize(ctx);
          openResponse(call);
          return fn(readAll(call, method.input, ctx.signal), ctx);
        });
      }) satisfies grpc.handleClientStreamingCall<Buffer, Buffer>;
    case 'bidi_streaming':
      return (async (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        const { ctx, end } = begin(call);
        try {
          await authorize(ctx);
          openResponse(call);
          const out = fn(readAll(call, method.input, ctx.signal), ctx) as AsyncIterable<
            MessageInitShape<DescMessage>
          >;
          await writeAll(out, call, method.output, ctx.signal);
          finishStream(call, ctx, end);
        } catch (e) {
          failStream(call, ctx, end, e);
        }
      }) satisfies grpc.handleBidiStreamingCall<Buffer, Buffer>;
  }
}

/**
 * Sends the response headers of a call whose client streams requests as soon as it is accepted.
 * A grpc-js client keeps a copy of every message it sends (to replay them on a retry) until the
 * call is committed, which is when the first headers or message arrive (or the copy passes 1 MB
 * of messages): on a long stream the server rarely answers (an agent's reports), that copy grew
 * by every report for an hour or more.
 */
function openResponse(call: { sendMetadata(m: grpc.Metadata): void }): void {
  call.sendMetadata(new grpc.Metadata());
}

function finishStream(call: { end(): void }, ctx: CallContext, end: (code: Code) => void): void {
  if (ctx.signal.aborted) {
    end(Code.CANCELLED);
    return;
  }
  call.end();
  end(Code.OK);
}

function failStream(
  call: NodeJS.EventEmitter,
  ctx: CallContext,
  end: (code: Code) => void,
  e: unknown,
): void {
  const err = toRpcError(e);
  // grpc-js' stream turns an 'error' event into the call's status (and ends the call).
  if (!ctx.signal.aborted) call.emit('error', err);
  end(ctx.signal.aborted ? Code.CANCELLED : err.code);
}
