// Responses of a grpc-js client stream as an async iterable: buffered with a high-water mark
// (the stream is paused while the consumer lags), ended by the call's status, and cancelling the
// call when the consumer stops early.
import type * as grpc from '@grpc/grpc-js';
import { Code, RpcError } from './errors.js';

const HIGH_WATER = 32;
const LOW_WATER = 8;

type ResponseStream<O> = grpc.ClientReadableStream<O> | grpc.ClientDuplexStream<Buffer, O>;

/**
 * Starts listening to `call` at once (so no event is missed, and an error status never goes
 * unheard) and returns the responses. Iteration throws RpcError for a non-OK status. Breaking out
 * early, or `signal` aborting, cancels the call.
 */
export function responses<O>(
  call: ResponseStream<O>,
  signal?: AbortSignal,
): AsyncGenerator<O, void, undefined> {
  const queue: O[] = [];
  let status: grpc.StatusObject | undefined;
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  call.on('data', (m: O) => {
    queue.push(m);
    if (queue.length >= HIGH_WATER) call.pause();
    notify();
  });
  call.on('end', () => {
    ended = true;
    notify();
  });
  call.on('status', (s: grpc.StatusObject) => {
    status = s;
    call.resume(); // let whatever is buffered flow out so 'end' follows
    notify();
  });
  call.on('error', () => {}); // the 'status' event carries the same information
  const onAbort = (): void => call.cancel();
  if (signal?.aborted) call.cancel();
  else signal?.addEventListener('abort', onAbort, { once: true });

  async function* pull(): AsyncGenerator<O, void, undefined> {
    try {
      while (true) {
        if (queue.length > 0) {
          const m = queue.shift() as O;
          if (queue.length < LOW_WATER && call.isPaused()) call.resume();
          yield m;
          continue;
        }
        if (status && ended) {
          if (status.code !== Code.OK)
            throw new RpcError(status.code, status.details, status.metadata);
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!status) call.cancel();
    }
  }
  return pull();
}
