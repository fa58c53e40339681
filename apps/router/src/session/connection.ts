// A client connection's life: the startup handshake, then its messages one at a time from the
// inbox (client-in.ts), each dispatched by its type to the simple or extended protocol, with no
// promise and no event-loop turn between messages that need none.
import { FLUSH, FrontendCode, ProtocolError, WholeFrame } from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import { handleBatch } from '../protocol/extended.js';
import { handleQuery } from '../protocol/simple.js';
import { corkIfUnannounced, ddlFinished, refreshNames } from './names.js';
import type { InMsg } from './client-in.js';
import type { Session } from './session.js';
import { runStartup } from './startup.js';
import { probePins } from './unpin.js';

/** The Flush that ends extended messages a Query follows without a Sync. */
const FLUSH_MESSAGE = WholeFrame.of(FrontendCode.Flush, FLUSH);

export class Connection {
  /** A message's handling is under way (serve() runs, or waits for a message's promise). */
  private serving = false;
  /** Extended-protocol messages gathered up to their Sync or Flush. */
  private batch: InMsg[] = [];

  constructor(private readonly s: Session) {}

  /** Logs the client in, then serve() takes over; never rejects. */
  async run(): Promise<void> {
    const s = this.s;
    const loginTimer = setTimeout(() => {
      s.fatal(new RouterError('08006', 'the client did not log in in time', 'FATAL'));
    }, s.services.config.loginTimeoutMs);
    try {
      const ok = await runStartup(s).finally(() => clearTimeout(loginTimer));
      if (!ok) return s.close();
    } catch (e) {
      s.fatal(e);
      return s.close();
    }
    // From now on the inbox calls serve() as messages come.
    s.input.loggedIn(this.serve);
  }

  /**
   * Handles the inbox's messages in order, each to its end: those answered at once in this turn,
   * and after one that has to wait (a backend, the pool), on from when it is done.
   */
  private readonly serve = (): void => {
    if (this.serving) return;
    this.serving = true;
    const s = this.s;
    const input = s.input;
    try {
      while (!s.closed && input.hasMessage) {
        const pending = this.handle(input.takeMessage());
        if (pending !== undefined) {
          pending.then(this.served, this.failed);
          return;
        }
      }
    } catch (e) {
      return this.failed(e);
    }
    this.serving = false;
  };

  private readonly served = (): void => {
    this.serving = false;
    this.serve();
  };

  private readonly failed = (e: unknown): void => {
    this.serving = false;
    this.s.fatal(e);
    this.s.close();
  };

  /** Handles one message; a promise only when it has to wait (a backend, the pool). */
  private handle(m: InMsg): Promise<void> | undefined {
    const s = this.s;
    if (m.code === -1) {
      // The inbox's own FATAL (a frame too long): sent after what came before it, then the end.
      s.out.push(m.raw);
      s.out.flush();
      s.close();
      return;
    }
    if (s.skipUntilSync && m.code !== FrontendCode.Sync) return;
    switch (m.code) {
      case FrontendCode.Query:
        if (this.batch.length > 0) return this.queryAfterBatch(m);
        return this.fresh(m, true, true);
      case FrontendCode.Parse:
      case FrontendCode.Bind:
      case FrontendCode.Describe:
      case FrontendCode.Execute:
      case FrontendCode.Close:
        this.batch.push(m);
        return;
      case FrontendCode.Flush:
      case FrontendCode.Sync:
        return this.fresh(m, false, m.code === FrontendCode.Sync);
      // CopyData, CopyDone, CopyFail outside COPY: dropped, as Postgres does.
      case FrontendCode.CopyData:
      case FrontendCode.CopyDone:
      case FrontendCode.CopyFail:
        return;
      case FrontendCode.Terminate:
        s.close();
        return;
      case FrontendCode.FunctionCall:
        s.sendError(
          new RouterError(
            SQLSTATE.featureNotSupported,
            'the function call protocol message is not supported by the router',
          ),
        );
        s.out.push(s.readyFrame());
        s.out.flush();
        return;
      default:
        s.fatal(new ProtocolError(`invalid frontend message type ${m.code}`));
        return;
    }
  }

  /**
   * A Query after extended messages with no Sync between: Postgres reads messages in order, so
   * they run first, as a Flush would end them (their implicit transaction then ends with the
   * Query's), and after one of them failed the Query is skipped until the Sync, as Postgres does.
   */
  private queryAfterBatch(m: InMsg): Promise<void> | undefined {
    const query = (): Promise<void> | undefined =>
      this.s.skipUntilSync ? undefined : this.fresh(m, true, true);
    const flushed = this.fresh(FLUSH_MESSAGE, false, false);
    return flushed === undefined ? query() : flushed.then(query);
  }

  /**
   * Runs a Query (`query`) or the batch `m` ends after the session's table names are current
   * (DDL through any router may have added a table its search_path finds first); DDL it runs
   * marks them stale for every session, here at once and on the other routers before the client
   * hears that it is done. `synced`: the batch ends with a Sync (a Query is its own); one ended
   * by a Flush has not committed its implicit transaction yet. No closure when names are fresh:
   * this runs for every statement.
   */
  private fresh(m: InMsg, query: boolean, synced: boolean): Promise<void> | undefined {
    const stale = refreshNames(this.s);
    if (stale !== undefined) return stale.then(() => this.runFresh(m, query, synced));
    return this.runFresh(m, query, synced);
  }

  private runFresh(m: InMsg, query: boolean, synced: boolean): Promise<void> | undefined {
    const s = this.s;
    if (synced) corkIfUnannounced(s);
    const r = query ? handleQuery(s, m) : this.endOfBatch(m);
    if (r === undefined) return synced ? this.doneSynced() : ddlFinished(s, false);
    return synced
      ? r.then(this.doneSynced, this.failSynced)
      : r.then(this.doneFlushed, this.failFlushed);
  }

  // What follows a Query or batch, made once per connection (not a closure each): DDL announced,
  // then pinned backends a statement may have freed asked (unpin.ts) before the next message.
  private readonly doneSynced = (): Promise<void> | undefined => {
    const announced = ddlFinished(this.s, true);
    if (this.s.unpinProbes === undefined) return announced;
    return announced === undefined ? probePins(this.s) : announced.then(this.probe);
  };
  private readonly probe = (): Promise<void> | undefined => probePins(this.s);
  private readonly doneFlushed = (): Promise<void> | undefined => ddlFinished(this.s, false);
  private readonly failSynced = (e: unknown): Promise<never> =>
    rethrowAfter(ddlFinished(this.s, true), e);
  private readonly failFlushed = (e: unknown): Promise<never> =>
    rethrowAfter(ddlFinished(this.s, false), e);

  private endOfBatch(m: InMsg): Promise<void> | undefined {
    const s = this.s;
    this.batch.push(m);
    const batch = this.batch;
    this.batch = [];
    if (s.skipUntilSync) {
      s.skipUntilSync = false;
      // The backend of the open cycle skips to this Sync too: let it answer. A batch's own
      // transaction across nodes is rolled back.
      if (s.cycle !== undefined || s.txn.implicit) return handleBatch(s, [m], true);
      s.out.push(s.readyFrame());
      s.out.flush();
      return;
    }
    return handleBatch(s, batch);
  }
}

/** Rejects with `e` once `done` (if any) settled, as Promise.finally would. */
function rethrowAfter(done: Promise<void> | undefined, e: unknown): Promise<never> {
  if (done === undefined) return Promise.reject(e);
  return done.then(
    () => Promise.reject(e),
    () => Promise.reject(e),
  );
}
