// One client connection: reads its frames into an inbox, runs the startup handshake, then handles
// one message at a time (simple queries, extended-protocol batches, COPY) against the backends it
// holds. Transaction state lives here; what each statement does is decided by routing/route.ts.
import type { Socket } from 'node:net';
import {
  FrameReader,
  ProtocolError,
  READY_FOR_QUERY_FAILED,
  READY_FOR_QUERY_IDLE,
  READY_FOR_QUERY_IN_TRANSACTION,
  Writer,
  frameBytes,
  writeCopyFail,
  writeQuery,
  type TransactionStatus,
} from '@tessera/pg-wire';
import type { Backend } from '../pool/backend.js';
import type { ScramPassThrough } from '../pool/scram-pass-through.js';
import type { Pool } from '../pool/pool.js';
import type { RoutingCatalog } from '../routing/catalog-view.js';
import type { RouterServices } from '../services.js';
import { RouterError, SQLSTATE, sqlstateOf } from '../errors.js';
import type { Cancellable } from '../cancel.js';
import { ClientOut, type OutSink } from './client-out.js';
import { exchange, type Expectation, type ExchangeResult } from './exchange.js';
import { errorFields, errorFrame } from './errors-wire.js';
import { SessionSettings } from './settings.js';
import type { StatementRecord } from './statements.js';
import { runStartup } from './startup.js';
import { handleQuery } from './simple-query.js';
import { handleBatch } from './extended.js';
import { runPipelined } from './pipelined.js';
import { OpenTxn } from './txn.js';

/** One client message, whole (`raw`) with its body as a view of it; memory owned by the message. */
export interface InMsg {
  readonly code: number;
  readonly raw: Buffer;
  readonly body: Buffer;
}

interface Held {
  readonly backend: Backend;
  readonly pool: Pool;
}

/** Inbox size at which the client socket is paused until the session catches up. */
const INBOX_HIGH_BYTES = 4 * 1024 * 1024;
const MAX_PRE_LOGIN_FRAME = 64 * 1024;
/** Unread bytes held before login (a startup packet and one message): beyond, stop reading. */
const PRE_LOGIN_BUFFER_BYTES = 10_000 + MAX_PRE_LOGIN_FRAME + 5;
const MAX_FRAME = 1 << 30;
/** Unread bytes a client may leave on a pipelined read before it is cut off (Session.lagging). */
const SHARED_LAG_LIMIT_BYTES = 16 * 1024 * 1024;
/** How long a closing connection may take to deliver its last frames before it is cut. */
const CLOSE_GRACE_MS = 2000;

const QUIET_POISON =
  "DO $tessera$ BEGIN RAISE EXCEPTION 'statement refused by the router'; END $tessera$";

export class Session implements Cancellable {
  /** The client connection; replaced by its TLS session after SSLRequest (useSocket). */
  socket: Socket;
  out: ClientOut;
  /** The client's SCRAM key for logging in to nodes as its role; memory only, never logged. */
  passThrough: ScramPassThrough | undefined;
  encrypted = false;
  readonly reader = new FrameReader({ maxFrameLength: MAX_PRE_LOGIN_FRAME });
  pid = 0;
  secret = 0;
  database = '';
  user = '';
  readonly settings = new SessionSettings();
  readonly statements = new Map<string, StatementRecord>();

  /** Client-visible transaction status while no backend holds the transaction. */
  localStatus: TransactionStatus = 'I';
  /** BEGIN (and SAVEPOINT, SET LOCAL ...) waiting for the statement that picks the node. */
  prelude: string[] = [];
  /** The open transaction once a backend holds it: its nodes and replay log (txn.ts). */
  txn: OpenTxn | undefined;
  /** The node the open transaction started on (statements any node answers go there). */
  get txnNode(): string | undefined {
    return this.txn?.first;
  }
  /** Settings when the transaction began, restored if it rolls back. */
  settingsAtBegin: Map<string, string> | undefined;
  /** An extended-protocol cycle dispatched at a Flush keeps its backend until the Sync. */
  cycleOpen = false;
  /** The node of the open cycle. */
  cycleNode: string | undefined;
  /** After an error the router raised in an extended batch: drop messages until Sync. */
  skipUntilSync = false;
  readonly held = new Map<string, Held>();
  private readonly running = new Set<Backend>();

  private inbox: InMsg[] = [];
  private inboxBytes = 0;
  private wake: (() => void) | undefined;
  private paused = false;
  private startupPhase = true;
  private lastChunk: Buffer | undefined;
  closed = false;
  /** Set when the connection is over --max-clients: answered after its startup packet. */
  refusal: RouterError | undefined;

  constructor(
    socket: Socket,
    readonly services: RouterServices,
    private readonly onEnd: (s: Session) => void,
  ) {
    this.socket = socket;
    this.out = new ClientOut(socket);
    socket.setNoDelay(true);
    this.listen(socket);
  }

  private readonly onSocketData = (chunk: Buffer): void => this.onData(chunk);
  private readonly onSocketEnd = (): void => this.close();

  private listen(socket: Socket): void {
    socket.on('data', this.onSocketData);
    socket.on('error', this.onSocketEnd);
    socket.on('close', this.onSocketEnd);
  }

  /** From now on the client is read and written through `secure` (TLS over the same socket). */
  useSocket(secure: Socket): void {
    this.socket.off('data', this.onSocketData);
    this.socket = secure;
    this.out = new ClientOut(secure);
    this.encrypted = true;
    this.listen(secure);
  }

  /** Runs the connection to its end; never rejects. */
  async run(): Promise<void> {
    const loginTimer = setTimeout(() => {
      this.fatal(new RouterError('08006', 'the client did not log in in time', 'FATAL'));
    }, this.services.config.loginTimeoutMs);
    try {
      const ok = await runStartup(this).finally(() => clearTimeout(loginTimer));
      if (!ok) return this.close();
      this.startupPhase = false;
      this.socket.resume(); // paused if the client sent ahead of its login
      this.reader.setMaxFrameLength(MAX_FRAME);
      this.drainFrames();
      while (!this.closed) {
        // Messages already in the inbox are taken without an event-loop turn; only statements
        // that talk to a backend (or wait) return a promise.
        const m = this.inbox.length > 0 ? this.takeMessage() : await this.nextMessage();
        if (m === undefined) break;
        const pending = this.handle(m);
        if (pending !== undefined) await pending;
      }
    } catch (e) {
      this.fatal(e);
    } finally {
      this.close();
    }
  }

  // ---- reading ----

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.lastChunk = chunk;
    try {
      this.reader.push(chunk);
    } catch (e) {
      return this.fatal(e);
    }
    if (this.startupPhase) {
      // Nobody is trusted before login: hold no more than the handshake can use, read on only
      // when it asks (waitData), so a client cannot make the router buffer without bound.
      if (this.reader.buffered > PRE_LOGIN_BUFFER_BYTES) this.socket.pause();
      this.notify();
      return;
    }
    this.drainFrames();
  }

  private drainFrames(): void {
    try {
      for (let f = this.reader.next(); f; f = this.reader.next()) {
        const whole = frameBytes(f);
        const c = this.lastChunk;
        const stable =
          c !== undefined &&
          whole.buffer === c.buffer &&
          whole.byteOffset >= c.byteOffset &&
          whole.byteOffset + whole.length <= c.byteOffset + c.length;
        const raw = stable ? whole : Buffer.from(whole);
        this.inbox.push({ code: f.code, raw, body: raw.subarray(5) });
        this.inboxBytes += raw.length;
      }
    } catch (e) {
      // A bad length: the stream is out of sync. Answer after what was already queued.
      const { fields } = errorFields(e);
      this.inbox.push({
        code: -1,
        raw: errorFrame({ ...fields, severity: 'FATAL' }),
        body: Buffer.alloc(0),
      });
      this.socket.pause();
    }
    if (this.inboxBytes > INBOX_HIGH_BYTES && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** Resolves when more bytes arrived (startup phase) or the connection closed. */
  waitData(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.startupPhase) this.socket.resume();
    return new Promise((resolve) => (this.wake = resolve));
  }

  /** The next client message, or undefined once the connection closed. */
  async nextMessage(): Promise<InMsg | undefined> {
    while (this.inbox.length === 0) {
      if (this.closed) return undefined;
      await this.waitData();
    }
    return this.takeMessage();
  }

  private takeMessage(): InMsg {
    const m = this.inbox.shift()!;
    this.inboxBytes -= m.raw.length;
    if (this.paused && this.inboxBytes < INBOX_HIGH_BYTES / 2) {
      this.paused = false;
      this.socket.resume();
    }
    return m;
  }

  /** Puts a message back at the front (a COPY that ended early). */
  unshift(m: InMsg): void {
    this.inbox.unshift(m);
    this.inboxBytes += m.raw.length;
  }

  // ---- dispatch ----

  private batch: InMsg[] = [];

  /** Handles one message; a promise only when it has to wait (a backend, the pool). */
  private handle(m: InMsg): Promise<void> | undefined {
    if (m.code === -1) {
      this.out.push(m.raw);
      this.out.flush();
      this.close();
      return;
    }
    if (this.skipUntilSync && m.code !== 0x53) return;
    switch (m.code) {
      case 0x51: // Query
        return handleQuery(this, m);
      case 0x50: // Parse
      case 0x42: // Bind
      case 0x44: // Describe
      case 0x45: // Execute
      case 0x43: // Close
        this.batch.push(m);
        return;
      case 0x48: // Flush
      case 0x53: {
        // Sync
        this.batch.push(m);
        const batch = this.batch;
        this.batch = [];
        if (this.skipUntilSync) {
          this.skipUntilSync = false;
          if (this.cycleOpen) {
            // The backend of the open cycle skips to this Sync too: let it answer.
            return handleBatch(this, [m]);
          }
          this.out.push(this.readyFrame());
          this.out.flush();
          return;
        }
        return runPipelined(this, batch) ?? handleBatch(this, batch);
      }
      case 0x64: // CopyData, CopyDone, CopyFail outside COPY: dropped, as Postgres does.
      case 0x63:
      case 0x66:
        return;
      case 0x58: // Terminate
        this.close();
        return;
      case 0x46: // FunctionCall
        this.sendError(
          new RouterError(
            SQLSTATE.featureNotSupported,
            'the function call protocol message is not supported by the router',
          ),
        );
        this.out.push(this.readyFrame());
        this.out.flush();
        return;
      default:
        this.fatal(new ProtocolError(`invalid frontend message type ${m.code}`));
        return;
    }
  }

  // ---- transaction state ----

  /** The status the client should see in ReadyForQuery. */
  status(): TransactionStatus {
    const txn = this.txn;
    if (txn === undefined) return this.localStatus;
    // Failed on one node = failed for the client, as one Postgres would be.
    if (txn.broken) return 'E';
    let idle = true;
    for (const node of txn.nodes.keys()) {
      const b = this.held.get(node)?.backend;
      if (b === undefined) continue;
      if (b.status === 'E' || b.dead) return 'E';
      if (b.status !== 'I') idle = false;
    }
    return idle ? 'I' : 'T';
  }

  readyFrame(): Buffer {
    switch (this.status()) {
      case 'I':
        return READY_FOR_QUERY_IDLE;
      case 'T':
        return READY_FOR_QUERY_IN_TRANSACTION;
      case 'E':
        return READY_FOR_QUERY_FAILED;
    }
  }

  /** In a transaction block, whether or not a node was picked yet. */
  inTransaction(): boolean {
    return this.status() !== 'I';
  }

  catalog(): RoutingCatalog {
    const c = this.services.catalog();
    if (!c)
      throw new RouterError(
        SQLSTATE.cannotConnectNow,
        'the router has no valid catalog yet; retry shortly',
      );
    return c;
  }

  /**
   * The backend for `node`, held (transaction, session mode, open cycle) or acquired now, with the
   * messages that must precede the client's: settings replay, deferred BEGIN.
   */
  async engage(
    node: string,
    catalog: RoutingCatalog,
    begin = true,
  ): Promise<{ backend: Backend; messages: Buffer[]; expect: Expectation[] }> {
    const messages: Buffer[] = [];
    const expect: Expectation[] = [];
    const backend = await this.engageInto(node, catalog, begin, messages, expect);
    return { backend, messages, expect };
  }

  /**
   * engage() appending to the caller's `messages` and `expect`; synchronous (no promise, no
   * event-loop turn) when the backend is held already or an idle one is in the pool.
   */
  engageInto(
    node: string,
    catalog: RoutingCatalog,
    begin: boolean,
    messages: Buffer[],
    expect: Expectation[],
  ): Backend | Promise<Backend> {
    let h = this.held.get(node);
    if (h !== undefined && h.backend.dead && this.txn?.nodes.has(node)) {
      // Its part of the transaction died with it: a fresh backend would run the statement
      // outside the transaction. Failed until the client rolls back.
      this.lost(h.backend);
      throw new RouterError(
        SQLSTATE.connectionFailure,
        `the connection to node "${node}" was lost in the middle of the transaction; roll back`,
      );
    }
    if (h === undefined || h.backend.dead) {
      if (h) this.drop(node);
      const pool = this.poolFor(catalog, node);
      const idle = pool.tryAcquire();
      if (idle === undefined) return this.acquireInto(pool, node, begin, messages, expect);
      h = { backend: idle, pool };
      this.held.set(node, h);
    }
    this.prepareBackend(h.backend, node, begin, messages, expect);
    return h.backend;
  }

  private async acquireInto(
    pool: Pool,
    node: string,
    begin: boolean,
    messages: Buffer[],
    expect: Expectation[],
  ): Promise<Backend> {
    const backend = await pool.acquire(this.services.config.acquireTimeoutMs, this.passThrough);
    this.held.set(node, { backend, pool });
    this.prepareBackend(backend, node, begin, messages, expect);
    return backend;
  }

  /** Settings replay and the deferred BEGIN, ahead of the client's messages. */
  private prepareBackend(
    backend: Backend,
    node: string,
    begin: boolean,
    messages: Buffer[],
    expect: Expectation[],
  ): void {
    this.replaySettings(backend, messages, expect);
    if (begin) this.takePrelude(node, messages, expect);
  }

  /** The session's settings on `backend`, if it has others, ahead of the client's messages. */
  replaySettings(backend: Backend, messages: Buffer[], expect: Expectation[]): void {
    const replay = this.settings.replayFor(backend.settingsKey);
    if (replay !== undefined) {
      messages.push(writeQuery(new Writer(replay.length + 16), replay).flush());
      expect.push({ t: 'quiet' });
      backend.settingsKey = this.settings.key();
    }
  }

  /** The pool for `node`, remembered per catalog snapshot (its key is built once, not per statement). */
  poolFor(catalog: RoutingCatalog, node: string): Pool {
    if (this.poolsCatalog !== catalog) {
      this.poolsCatalog = catalog;
      this.poolsByNode.clear();
    }
    let pool = this.poolsByNode.get(node);
    if (pool === undefined || pool.closed) {
      pool = this.services.pools.pool(catalog, node, this.database, this.user);
      this.poolsByNode.set(node, pool);
    }
    return pool;
  }
  private poolsCatalog: RoutingCatalog | undefined;
  private readonly poolsByNode = new Map<string, Pool>();

  /** The deferred BEGIN (and what followed it) for the node the transaction now runs on. */
  takePrelude(node: string, messages: Buffer[], expect: Expectation[]): void {
    const txn = this.txn;
    if (txn !== undefined) {
      if (txn.nodes.has(node)) return;
      // A node joining the transaction: BEGIN (same options) and the savepoints and SETs so far,
      // in order, so a later ROLLBACK TO or RELEASE means the same on every node.
      if (txn.replayUncertain)
        throw new RouterError(
          SQLSTATE.featureNotSupported,
          `this statement runs on node "${node}", which the transaction has not used yet, and the router cannot rebuild the transaction's state there (a multi-statement query failed midway); roll back, or send statements one by one`,
        );
      const failed = this.status() === 'E';
      const sql = txn.replay.join('; ');
      messages.push(writeQuery(new Writer(sql.length + 16), sql).flush());
      expect.push({ t: 'quiet' });
      txn.join(node);
      if (failed) {
        messages.push(writeQuery(new Writer(128), QUIET_POISON).flush());
        expect.push({ t: 'quiet' });
      }
      return;
    }
    if (this.prelude.length > 0) {
      const sql = this.prelude.join('; ');
      messages.push(writeQuery(new Writer(sql.length + 16), sql).flush());
      expect.push({ t: 'quiet' });
      this.txn = new OpenTxn(this.prelude);
      this.txn.join(node);
      this.prelude = [];
      // The failed state the client saw, if any, must hold on the node too.
      if (this.localStatus === 'E') {
        messages.push(writeQuery(new Writer(128), QUIET_POISON).flush());
        expect.push({ t: 'quiet' });
      }
    }
  }

  /** Runs an exchange with cancel tracking and COPY IN pass-through. */
  async run1(
    backend: Backend,
    messages: Buffer[],
    expect: Expectation[],
    collectTags = false,
    sink: OutSink = this.out,
    onCopyIn?: () => void,
  ): Promise<ExchangeResult> {
    this.running.add(backend);
    let copying: Promise<void> | undefined;
    try {
      const result = await exchange(
        backend,
        messages,
        expect,
        sink,
        {
          onCopyIn: () => {
            if (onCopyIn) onCopyIn();
            else copying = this.pumpCopyIn(backend);
          },
          onError: (code) => this.services.metrics.error(code),
          owner: this,
        },
        collectTags,
      );
      if (copying !== undefined) await copying;
      return result;
    } catch (e) {
      this.lost(backend);
      throw e;
    } finally {
      this.running.delete(backend);
    }
  }

  /**
   * Runs a statement on a backend lent by `pool` that other sessions' statements are pipelined on
   * (pipelined.ts), forwarding its answer, and gives the backend back.
   */
  async runShared(
    backend: Backend,
    pool: Pool,
    messages: Buffer[],
    expect: readonly Expectation[],
    parsing?: string,
  ): Promise<void> {
    this.running.add(backend);
    try {
      await exchange(backend, messages, expect, this.out, {
        // A read cannot start a COPY; if the node says otherwise the connection is not trusted.
        onCopyIn: () => backend.destroy('unexpected COPY on a pipelined read'),
        onError: (code) => this.services.metrics.error(code),
        owner: this,
        onLag: () => this.lagging(),
      });
    } catch (e) {
      this.sendError(e);
      this.out.push(this.readyFrame());
    } finally {
      this.running.delete(backend);
      if (parsing !== undefined) backend.parsing.delete(parsing);
      pool.giveBack(backend);
    }
    this.out.flush();
  }

  /**
   * The client stopped reading while its rows come from a backend other clients share: the rows
   * are kept for it up to a limit (pausing the backend would stall them), then it is cut off.
   */
  private lagging(): void {
    if (this.socket.writableLength <= SHARED_LAG_LIMIT_BYTES) return;
    this.services.log.warn(
      { client: this.pid, buffered: this.socket.writableLength },
      'client cut off: it stopped reading rows of a read pipelined with other clients',
    );
    this.socket.destroy();
    this.close();
  }

  /** Forwards the client's CopyData/CopyDone/CopyFail to a backend in COPY IN, as they come. */
  private async pumpCopyIn(backend: Backend): Promise<void> {
    while (!this.closed && !backend.dead) {
      const m = await this.nextMessage();
      if (m === undefined) return;
      if (m.code === 0x64) {
        backend.write(m.raw);
        continue;
      }
      if (m.code === 0x63 || m.code === 0x66) {
        backend.write(m.raw);
        return;
      }
      if (m.code === 0x48 || m.code === 0x53) continue; // Flush/Sync during COPY: ignored, as Postgres does
      // Anything else ends the COPY with an error, as Postgres would.
      this.unshift(m);
      backend.write(writeCopyFail(new Writer(64), 'unexpected message during COPY').flush());
      return;
    }
  }

  /** After an exchange: track the transaction and give backends back to their pools. */
  settle(node: string): void {
    const h = this.held.get(node);
    if (!h) return;
    const b = h.backend;
    if (b.dead) {
      this.lost(b);
      return;
    }
    const txn = this.txn;
    if (b.status === 'I') {
      if (txn?.nodes.has(node)) {
        if (txn.nodes.size === 1 && !txn.broken) {
          // The one node's COMMIT or ROLLBACK ended the transaction.
          this.txn = undefined;
          this.localStatus = 'I';
          this.settingsAtBegin = undefined;
        } else {
          // A part ended on its own while others are open: it can no longer commit with them.
          txn.nodes.delete(node);
          txn.broken = true;
        }
      }
      if (this.services.config.poolMode === 'transaction' && !this.cycleOpen) {
        this.held.delete(node);
        h.pool.release(b);
      }
    } else if (txn === undefined) {
      // Begun by the client's own text (BEGIN inside a multi-statement query).
      this.txn = new OpenTxn(['BEGIN']);
      this.txn.join(node);
      this.txn.wrote(node);
    } else if (!txn.nodes.has(node)) {
      txn.join(node);
      txn.wrote(node);
    }
  }

  settleAll(): void {
    for (const node of [...this.held.keys()]) this.settle(node);
  }

  /** A backend died under us: forget it; a transaction on it is lost (the client must roll back). */
  lost(b: Backend): void {
    for (const [node, h] of this.held) {
      if (h.backend !== b) continue;
      this.drop(node);
      const txn = this.txn;
      if (txn?.nodes.has(node)) {
        // Its part of the transaction is gone: failed until the client rolls back (txn.ts).
        txn.nodes.delete(node);
        txn.broken = true;
      }
    }
  }

  /** Closes and forgets the backend held for `node` (left mid-transaction by a failed fan-out). */
  drop(node: string): void {
    const h = this.held.get(node);
    if (!h) return;
    this.held.delete(node);
    if (!h.backend.dead) h.backend.destroy('dropped by its session');
    h.pool.release(h.backend);
  }

  /** Puts the transaction on `node` into the failed state without a visible error. */
  async poison(node: string): Promise<void> {
    const h = this.held.get(node);
    if (!h || h.backend.status === 'E') return;
    await this.run1(
      h.backend,
      [writeQuery(new Writer(128), QUIET_POISON).flush()],
      [{ t: 'quiet' }],
    );
  }

  /** A statement was refused or failed in the router: the transaction, if any, fails as in Postgres. */
  async failTransaction(): Promise<void> {
    if (this.txnNode !== undefined) await this.poison(this.txnNode);
    else if (this.localStatus === 'T') this.localStatus = 'E';
  }

  // ---- errors and the end ----

  sendError(e: unknown): void {
    const { fields, fatal, internal } = errorFields(e);
    if (internal)
      this.services.log.error(
        { err: e, client: this.pid },
        'internal error while serving a client',
      );
    this.services.metrics.error(fields.code || sqlstateOf(e));
    this.out.push(errorFrame(fatal ? { ...fields, severity: 'FATAL' } : fields));
    if (fatal) {
      this.out.flush();
      this.close();
    }
  }

  fatal(e: unknown): void {
    if (this.closed) return;
    const { fields } = errorFields(e);
    this.services.metrics.error(fields.code);
    this.out.push(errorFrame({ ...fields, severity: 'FATAL' }));
    this.out.flush();
    this.close();
  }

  *activeBackends(): Iterable<Backend> {
    yield* this.running;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.notify();
    for (const [node, h] of this.held) {
      this.held.delete(node);
      // A backend mid-statement or mid-transaction is not reusable; the pool closes those.
      if (this.running.has(h.backend)) h.backend.destroy('client went away');
      h.pool.release(h.backend);
    }
    const socket = this.socket;
    socket.end();
    socket.destroySoon();
    // A peer that never reads (or a TLS handshake that never finished) would keep the socket,
    // and what is queued on it, forever: it gets a moment to take the last frames, no more.
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    this.onEnd(this);
  }
}
