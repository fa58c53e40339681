// Running an exchange (exchange.ts) on a backend for a session: the backend is tracked as running
// (a CancelRequest reaches it; a client gone mid-statement makes the pool close it), COPY IN is
// fed from the client's messages, and a backend shared with other sessions' reads is given back
// after the answer, the client cut off if it stops reading.
import { FrontendCode, Writer, writeCopyFail } from '@tessera/pg-wire';
import type { Backend } from '../pool/backend.js';
import type { OutSink } from '../session/client-out.js';
import { exchange, type ExchangeHooks, type Expectation, type ExchangeResult } from './exchange.js';
import { lost } from './backends.js';
import type { Session } from '../session/session.js';

/** Unread bytes a client may leave on a pipelined read before it is cut off (lagging). */
const SHARED_LAG_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Runs an exchange with cancel tracking and COPY IN pass-through. The exchange's own promise,
 * not an async wrapper around it: this runs for every statement, and each level of promises
 * costs a microtask turn.
 */
export function run1(
  s: Session,
  backend: Backend,
  messages: Buffer[],
  expect: Expectation[],
  collectTags = false,
  sink: OutSink = s.out,
  onCopyIn?: () => void,
): Promise<ExchangeResult> {
  s.running.push(backend);
  return exchange(
    backend,
    messages,
    expect,
    sink,
    onCopyIn === undefined ? sessionHooks(s) : { ...sessionHooks(s), onCopyIn },
    collectTags,
  );
}

/** The hooks of a session's exchanges, made once per session. */
function sessionHooks(s: Session): ExchangeHooks {
  return (s.exchangeHooks ??= {
    onCopyIn: (backend) => pumpCopyIn(s, backend),
    onError: (code) => s.services.metrics.error(code),
    owner: s,
    onEnd: (backend, failed) => {
      stopRunning(s, backend);
      if (failed) lost(s, backend);
    },
  });
}

/**
 * Runs an exchange on a backend that other sessions' statements are pipelined on (a lane,
 * execute/acquire.ts): a client that falls behind is cut off rather than the backend paused.
 */
export function runShared(
  s: Session,
  backend: Backend,
  messages: Buffer[],
  expect: readonly Expectation[],
): Promise<ExchangeResult> {
  s.running.push(backend);
  return exchange(backend, messages, expect, s.out, sharedHooks(s));
}

/** The hooks of a session's exchanges on shared backends, made once per session. */
const shared = new WeakMap<Session, ExchangeHooks>();
function sharedHooks(s: Session): ExchangeHooks {
  let hooks = shared.get(s);
  if (hooks === undefined) {
    hooks = {
      onEnd: (b) => stopRunning(s, b),
      // A read cannot start a COPY; if the node says otherwise the connection is not trusted.
      onCopyIn: (b) => b.destroy('unexpected COPY on a pipelined read'),
      onError: (code) => s.services.metrics.error(code),
      owner: s,
      onLag: () => lagging(s),
    };
    shared.set(s, hooks);
  }
  return hooks;
}

/**
 * The client stopped reading while its rows come from a backend other clients share: the rows
 * are kept for it up to a limit (pausing the backend would stall them), then it is cut off.
 */
function lagging(s: Session): void {
  if (s.socket.writableLength <= SHARED_LAG_LIMIT_BYTES) return;
  s.services.log.warn(
    { client: s.pid, buffered: s.socket.writableLength },
    'client cut off: it stopped reading rows of a read pipelined with other clients',
  );
  s.socket.destroy();
  s.close();
}

/** Forwards the client's CopyData/CopyDone/CopyFail to a backend in COPY IN, as they come. */
async function pumpCopyIn(s: Session, backend: Backend): Promise<void> {
  while (!s.closed && !backend.dead) {
    const m = await s.input.nextMessage();
    if (m === undefined) return;
    if (m.code === FrontendCode.CopyData) {
      backend.write(m.raw);
      continue;
    }
    if (m.code === FrontendCode.CopyDone || m.code === FrontendCode.CopyFail) {
      backend.write(m.raw);
      return;
    }
    // Flush/Sync during COPY: ignored, as Postgres does.
    if (m.code === FrontendCode.Flush || m.code === FrontendCode.Sync) continue;
    // Anything else ends the COPY with an error, as Postgres would.
    s.input.unshift(m);
    backend.write(writeCopyFail(new Writer(64), 'unexpected message during COPY').flush());
    return;
  }
}

/** `backend` no longer runs a statement for `s` (an array: a Set shrank its table per delete). */
function stopRunning(s: Session, backend: Backend): void {
  const running = s.running;
  const i = running.lastIndexOf(backend);
  if (i === running.length - 1) running.pop();
  else if (i >= 0) running.splice(i, 1);
}
