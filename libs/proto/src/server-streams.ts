// Moving messages between async iterables and grpc-js server streams: writes respect backpressure
// and stop when the call is cancelled; reads decode as they go.
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { decodeRequest, encode } from './codec.js';
import { Code, RpcError } from './errors.js';

const ABORTED = Symbol('aborted');

/**
 * Resolves with `p`'s value, or with ABORTED as soon as `signal` aborts. `p` keeps its handlers,
 * so a late rejection is never unhandled.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.resolve(ABORTED);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * Writes every item of `source` to `call`, waiting for 'drain' when grpc-js' buffer is full.
 * Returns when the source ends or the call is cancelled; on cancel the source's `return()` is
 * requested (not awaited: a handler stuck in an await must not keep the call open).
 */
export async function writeAll<Desc extends DescMessage>(
  source: AsyncIterable<MessageInitShape<Desc>>,
  call: Writable,
  schema: Desc,
  signal: AbortSignal,
): Promise<void> {
  const it = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    while (!signal.aborted) {
      const r = await untilAborted(it.next(), signal);
      if (r === ABORTED) break;
      if (r.done === true) {
        finished = true;
        break;
      }
      if (!call.write(encode(schema, r.value))) {
        await once(call, 'drain', { signal }).catch(() => {});
      }
    }
  } catch (e) {
    finished = true; // the source threw, so it is already closed
    throw e;
  } finally {
    if (!finished && it.return) Promise.resolve(it.return()).catch(() => {});
  }
}

/**
 * The request messages of a client-streaming or bidi call, decoded. Breaking out of it does not
 * destroy the call (responses may still be written). A malformed message throws
 * RpcError(INVALID_ARGUMENT); a cancelled call throws RpcError(CANCELLED).
 */
export async function* readAll<Desc extends DescMessage>(
  call: Readable,
  schema: Desc,
  signal: AbortSignal,
): AsyncGenerator<MessageShape<Desc>, void, undefined> {
  try {
    for await (const chunk of call.iterator({ destroyOnReturn: false })) {
      yield decodeRequest(schema, chunk as Buffer);
    }
  } catch (e) {
    if (signal.aborted) throw new RpcError(Code.CANCELLED, 'the client cancelled the call');
    throw e;
  }
  // A client's cancel also ends the request stream, and grpc-js reports the cancel a tick after
  // that end; one turn of the event loop lets the handler tell a cancel from a half-close.
  await new Promise((resolve) => setImmediate(resolve));
  if (signal.aborted) throw new RpcError(Code.CANCELLED, 'the client cancelled the call');
}
