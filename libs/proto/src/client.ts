// A typed client for a protobuf-es service descriptor over grpc-js: one function per method
// (keyed by localName), messages encoded with protobuf-es, failures rejected as RpcError.
import * as grpc from '@grpc/grpc-js';
import { fromBinary } from '@bufbuild/protobuf';
import type {
  DescMessage,
  DescMethod,
  DescService,
  MessageInitShape,
  MessageShape,
} from '@bufbuild/protobuf';
import { encode, passBytes } from './codec.js';
import { Code, RpcError, fromServiceError, toRpcError } from './errors.js';
import { responses } from './client-streams.js';
import { methodPath } from './method-definition.js';
import { Endpoints, endpointsOf, neverRan } from './endpoints.js';
import { parseAddressList } from './address.js';

export interface ClientOptions {
  /** Sent as metadata `authorization: Bearer <token>` on every call. */
  token?: string;
  /**
   * Share a connection: another client's `grpcClient` (its whole address list and connections are
   * shared), or a grpc-js Channel.
   */
  channel?: grpc.Channel | grpc.Client;
  /** Default deadline of unary and client-streaming calls (never of server/bidi streams). */
  deadlineMs?: number;
  /** Extra grpc-js channel options when this client makes its own channel. */
  channelOptions?: grpc.ChannelOptions;
}

export interface CallOptions {
  /** Aborting cancels the call; the promise/iteration rejects with RpcError(CANCELLED). */
  signal?: AbortSignal;
  /** Deadline of this call; overrides the client's default (and applies to streams too). */
  deadlineMs?: number;
}

export type UnaryCall<I extends DescMessage, O extends DescMessage> = (
  req: MessageInitShape<I>,
  opts?: CallOptions,
) => Promise<MessageShape<O>>;
/** The call starts when iteration starts; breaking out of the loop cancels it. */
export type ServerStreamingCall<I extends DescMessage, O extends DescMessage> = (
  req: MessageInitShape<I>,
  opts?: CallOptions,
) => AsyncIterable<MessageShape<O>>;
export type ClientStreamingCall<I extends DescMessage, O extends DescMessage> = (
  reqs: AsyncIterable<MessageInitShape<I>> | Iterable<MessageInitShape<I>>,
  opts?: CallOptions,
) => Promise<MessageShape<O>>;
/** The call starts at once: `send` requests, `end` when done sending, iterate the responses. */
export type BidiStreamingCall<I extends DescMessage, O extends DescMessage> = (
  opts?: CallOptions,
) => BidiStream<I, O>;

export interface BidiStream<I extends DescMessage, O extends DescMessage> extends AsyncIterable<
  MessageShape<O>
> {
  /** Queues one request (grpc-js buffers; returns false when its buffer is over the mark). */
  send(msg: MessageInitShape<I>): boolean;
  /** Half-closes: no more requests; responses keep coming until the server ends the call. */
  end(): void;
  /** Cancels the call; iteration then rejects with RpcError(CANCELLED). */
  cancel(): void;
}

export type MethodCall<M extends DescMethod> = M extends {
  methodKind: 'unary';
  input: infer I extends DescMessage;
  output: infer O extends DescMessage;
}
  ? UnaryCall<I, O>
  : M extends {
        methodKind: 'server_streaming';
        input: infer I extends DescMessage;
        output: infer O extends DescMessage;
      }
    ? ServerStreamingCall<I, O>
    : M extends {
          methodKind: 'client_streaming';
          input: infer I extends DescMessage;
          output: infer O extends DescMessage;
        }
      ? ClientStreamingCall<I, O>
      : M extends {
            methodKind: 'bidi_streaming';
            input: infer I extends DescMessage;
            output: infer O extends DescMessage;
          }
        ? BidiStreamingCall<I, O>
        : // a descriptor built at run time (e.g. from reflection): narrow by method.methodKind
          | UnaryCall<DescMessage, DescMessage>
          | ServerStreamingCall<DescMessage, DescMessage>
          | ClientStreamingCall<DescMessage, DescMessage>
          | BidiStreamingCall<DescMessage, DescMessage>;

export type Client<S extends DescService> = {
  [K in keyof S['method']]: MethodCall<S['method'][K]>;
} & {
  /** The grpc-js client of the address calls go to now; pass it as `channel` to share connections. */
  readonly grpcClient: grpc.Client;
  /** Closes the connections, unless they were shared in through `channel`. */
  close(): void;
};

/** Where a client's calls go: a list it follows (Endpoints), or one connection it was given. */
interface Route {
  readonly address: string;
  readonly maxAttempts: number;
  client(address?: string): grpc.Client;
  failed(address: string, err: RpcError): string;
}

function fixedRoute(address: string, client: grpc.Client): Route {
  return { address, maxAttempts: 1, client: () => client, failed: () => address };
}

/**
 * A client for `service` at `address`: `host:port`, or a comma-separated list of them (plaintext).
 * With a list, calls go to one address at a time; a refused connection or a standby's answer
 * moves them to the next one, or to the active coordinator the standby names, and a call that
 * never ran there is sent again at once (unary calls, and streams before their first message).
 * Methods are the descriptor's localNames: `await client.getCatalog({})`,
 * `for await (const c of client.watchCatalog({}))`,
 * `const s = client.report(); s.send({...}); for await (const d of s) ...`.
 */
export function createClient<S extends DescService>(
  service: S,
  address: string | readonly string[],
  opts: ClientOptions = {},
): Client<S> {
  const shared = opts.channel;
  const sharedEndpoints = shared instanceof grpc.Client ? endpointsOf(shared) : undefined;
  let route: Route;
  let owned: Endpoints | undefined;
  if (sharedEndpoints) route = sharedEndpoints;
  else if (shared) {
    const channelOverride = shared instanceof grpc.Client ? shared.getChannel() : shared;
    const list = typeof address === 'string' ? parseAddressList(address) : address;
    const first = list[0] ?? '';
    route = fixedRoute(
      first,
      new grpc.Client(first, grpc.credentials.createInsecure(), {
        ...opts.channelOptions,
        channelOverride,
      }),
    );
  } else {
    owned = new Endpoints(
      typeof address === 'string' ? parseAddressList(address) : address,
      opts.channelOptions,
    );
    route = owned;
  }
  const metadata = (): grpc.Metadata => {
    const md = new grpc.Metadata();
    if (opts.token !== undefined && opts.token !== '')
      md.set('authorization', `Bearer ${opts.token}`);
    return md;
  };
  /** The absolute deadline of a call (ms since the epoch), or undefined. */
  const deadlineOf = (callOpts: CallOptions, isStream: boolean): number | undefined => {
    const ms = callOpts.deadlineMs ?? (isStream ? undefined : opts.deadlineMs);
    return ms === undefined ? undefined : Date.now() + ms;
  };
  const callOptions = (deadline: number | undefined): grpc.CallOptions =>
    deadline === undefined ? {} : { deadline };
  /** Whether a call that failed with `err` on `addr` should be sent again (and after a pause). */
  const retry = async (
    addr: string,
    err: RpcError,
    attempt: number,
    callOpts: CallOptions,
    deadline: number | undefined,
  ): Promise<boolean> => {
    const next = route.failed(addr, err);
    if (!neverRan(err) || next === addr || attempt + 1 >= route.maxAttempts) return false;
    if (callOpts.signal?.aborted) return false;
    // After a first round, every coordinator may be between terms: give them a moment.
    if (attempt + 1 >= Math.ceil(route.maxAttempts / 2)) await delay(100);
    return deadline === undefined || Date.now() < deadline;
  };

  const out: Record<string, unknown> = {
    get grpcClient() {
      return route.client();
    },
    close: () => owned?.close(),
  };
  for (const method of service.methods) {
    const path = methodPath(method);
    const decode = (bytes: Buffer): MessageShape<DescMessage> => fromBinary(method.output, bytes);
    switch (method.methodKind) {
      case 'unary': {
        const once = (
          client: grpc.Client,
          bytes: Buffer,
          callOpts: CallOptions,
          deadline: number | undefined,
        ) =>
          new Promise<MessageShape<DescMessage>>((resolve, reject) => {
            if (callOpts.signal?.aborted) return reject(cancelledError());
            const onAbort = (): void => call.cancel();
            const call = client.makeUnaryRequest(
              path,
              passBytes,
              decode,
              bytes,
              metadata(),
              callOptions(deadline),
              (err, value) => {
                callOpts.signal?.removeEventListener('abort', onAbort);
                if (err) reject(fromServiceError(err));
                else resolve(value as MessageShape<DescMessage>);
              },
            );
            callOpts.signal?.addEventListener('abort', onAbort, { once: true });
          });
        out[method.localName] = (async (req, callOpts = {}) => {
          if (callOpts.signal?.aborted) throw cancelledError();
          let bytes: Buffer;
          try {
            bytes = encode(method.input, req);
          } catch (e) {
            throw toRpcError(e);
          }
          const deadline = deadlineOf(callOpts, false);
          for (let attempt = 0; ; attempt++) {
            const addr = route.address;
            try {
              return await once(route.client(addr), bytes, callOpts, deadline);
            } catch (e) {
              const err = fromServiceError(e);
              if (!(await retry(addr, err, attempt, callOpts, deadline))) throw err;
            }
          }
        }) satisfies UnaryCall<DescMessage, DescMessage>;
        break;
      }
      case 'server_streaming':
        out[method.localName] = ((req, callOpts = {}) => ({
          async *[Symbol.asyncIterator]() {
            const bytes = encode(method.input, req);
            const deadline = deadlineOf(callOpts, true);
            for (let attempt = 0; ; attempt++) {
              const addr = route.address;
              const call = route
                .client(addr)
                .makeServerStreamRequest(
                  path,
                  passBytes,
                  decode,
                  bytes,
                  metadata(),
                  callOptions(deadline),
                );
              let received = false;
              try {
                for await (const m of responses(call, callOpts.signal)) {
                  received = true;
                  yield m;
                }
                return;
              } catch (e) {
                const err = fromServiceError(e);
                if (received) {
                  route.failed(addr, err);
                  throw err;
                }
                if (!(await retry(addr, err, attempt, callOpts, deadline))) throw err;
              }
            }
          },
        })) satisfies ServerStreamingCall<DescMessage, DescMessage>;
        break;
      case 'client_streaming':
        out[method.localName] = (async (reqs, callOpts = {}) => {
          const addr = route.address;
          let call: grpc.ClientWritableStream<Buffer> | undefined;
          const result = new Promise<MessageShape<DescMessage>>((resolve, reject) => {
            call = route
              .client(addr)
              .makeClientStreamRequest(
                path,
                passBytes,
                decode,
                metadata(),
                callOptions(deadlineOf(callOpts, false)),
                (err, value) => {
                  if (err) {
                    const rpcErr = fromServiceError(err);
                    route.failed(addr, rpcErr);
                    reject(rpcErr);
                  } else resolve(value as MessageShape<DescMessage>);
                },
              );
          });
          const stream = call as grpc.ClientWritableStream<Buffer>;
          stream.on('error', () => {}); // the callback gets the status
          let settled = false; // the server may answer (or fail) before we are done sending
          result.then(
            () => (settled = true),
            () => (settled = true),
          );
          const onAbort = (): void => stream.cancel();
          callOpts.signal?.addEventListener('abort', onAbort, { once: true });
          try {
            let sent = 0;
            for await (const req of reqs) {
              if (settled) break;
              if (!stream.write(encode(method.input, req))) await drainOrEnd(stream);
              // a producer that never waits would otherwise starve the event loop (and the answer)
              else if (++sent % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
            }
            stream.end();
            return await result;
          } catch (e) {
            if (!settled) stream.cancel();
            throw e instanceof RpcError ? e : toRpcError(e);
          } finally {
            callOpts.signal?.removeEventListener('abort', onAbort);
          }
        }) satisfies ClientStreamingCall<DescMessage, DescMessage>;
        break;
      case 'bidi_streaming':
        out[method.localName] = ((callOpts = {}) => {
          const addr = route.address;
          const call = route
            .client(addr)
            .makeBidiStreamRequest(
              path,
              passBytes,
              decode,
              metadata(),
              callOptions(deadlineOf(callOpts, true)),
            );
          const replies = responses(call, callOpts.signal);
          // A failed stream moves the next one (the caller reconnects) to where the answer points.
          async function* followed(): AsyncGenerator<MessageShape<DescMessage>, void, undefined> {
            try {
              yield* replies;
            } catch (e) {
              const err = fromServiceError(e);
              route.failed(addr, err);
              throw err;
            }
          }
          const iterator = followed();
          return {
            send: (msg) => call.write(encode(method.input, msg)),
            end: () => call.end(),
            cancel: () => call.cancel(),
            [Symbol.asyncIterator]: () => iterator,
          };
        }) satisfies BidiStreamingCall<DescMessage, DescMessage>;
        break;
    }
  }
  return out as Client<S>;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function cancelledError(): RpcError {
  return new RpcError(Code.CANCELLED, 'the call was cancelled before it started');
}

/** Waits until a client stream can take more, or has ended (then the write loop's next write is moot). */
function drainOrEnd(stream: grpc.ClientWritableStream<Buffer>): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('status', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('status', done);
    stream.on('close', done);
  });
}
