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

export interface ClientOptions {
  /** Sent as metadata `authorization: Bearer <token>` on every call. */
  token?: string;
  /** Share a connection: a grpc-js Channel, or another client's (e.g. `otherClient.grpcClient`). */
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
  /** The underlying grpc-js client; pass it as `channel` to share the connection. */
  readonly grpcClient: grpc.Client;
  /** Closes the connection, unless it was shared in through `channel`. */
  close(): void;
};

/**
 * A client for `service` at `address` (`host:port`, plaintext). Methods are the descriptor's
 * localNames: `await client.getCatalog({})`, `for await (const c of client.watchCatalog({}))`,
 * `const s = client.report(); s.send({...}); for await (const d of s) ...`.
 */
export function createClient<S extends DescService>(
  service: S,
  address: string,
  opts: ClientOptions = {},
): Client<S> {
  const shared = opts.channel;
  const channelOverride = shared instanceof grpc.Client ? shared.getChannel() : shared;
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    ...opts.channelOptions,
    ...(channelOverride ? { channelOverride } : {}),
  });
  const metadata = (): grpc.Metadata => {
    const md = new grpc.Metadata();
    if (opts.token !== undefined && opts.token !== '')
      md.set('authorization', `Bearer ${opts.token}`);
    return md;
  };
  const callOptions = (callOpts: CallOptions, isStream: boolean): grpc.CallOptions => {
    const ms = callOpts.deadlineMs ?? (isStream ? undefined : opts.deadlineMs);
    return ms === undefined ? {} : { deadline: Date.now() + ms };
  };

  const out: Record<string, unknown> = {
    grpcClient: client,
    close: () => {
      if (!shared) client.close();
    },
  };
  for (const method of service.methods) {
    const path = methodPath(method);
    const decode = (bytes: Buffer): MessageShape<DescMessage> => fromBinary(method.output, bytes);
    switch (method.methodKind) {
      case 'unary':
        out[method.localName] = ((req, callOpts = {}) =>
          new Promise((resolve, reject) => {
            if (callOpts.signal?.aborted) return reject(cancelledError());
            let bytes: Buffer;
            try {
              bytes = encode(method.input, req);
            } catch (e) {
              return reject(toRpcError(e));
            }
            const onAbort = (): void => call.cancel();
            const call = client.makeUnaryRequest(
              path,
              passBytes,
              decode,
              bytes,
              metadata(),
              callOptions(callOpts, false),
              (err, value) => {
                callOpts.signal?.removeEventListener('abort', onAbort);
                if (err) reject(fromServiceError(err));
                else resolve(value as MessageShape<DescMessage>);
              },
            );
            callOpts.signal?.addEventListener('abort', onAbort, { once: true });
          })) satisfies UnaryCall<DescMessage, DescMessage>;
        break;
      case 'server_streaming':
        out[method.localName] = ((req, callOpts = {}) => ({
          async *[Symbol.asyncIterator]() {
            const bytes = encode(method.input, req);
            const call = client.makeServerStreamRequest(
              path,
              passBytes,
              decode,
              bytes,
              metadata(),
              callOptions(callOpts, true),
            );
            yield* responses(call, callOpts.signal);
          },
        })) satisfies ServerStreamingCall<DescMessage, DescMessage>;
        break;
      case 'client_streaming':
        out[method.localName] = (async (reqs, callOpts = {}) => {
          let call: grpc.ClientWritableStream<Buffer> | undefined;
          const result = new Promise<MessageShape<DescMessage>>((resolve, reject) => {
            call = client.makeClientStreamRequest(
              path,
              passBytes,
              decode,
              metadata(),
              callOptions(callOpts, false),
              (err, value) => {
                if (err) reject(fromServiceError(err));
                else resolve(value as MessageShape<DescMessage>);
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
          const call = client.makeBidiStreamRequest(
            path,
            passBytes,
            decode,
            metadata(),
            callOptions(callOpts, true),
          );
          const replies = responses(call, callOpts.signal);
          return {
            send: (msg) => call.write(encode(method.input, msg)),
            end: () => call.end(),
            cancel: () => call.cancel(),
            [Symbol.asyncIterator]: () => replies,
          };
        }) satisfies BidiStreamingCall<DescMessage, DescMessage>;
        break;
    }
  }
  return out as Client<S>;
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
