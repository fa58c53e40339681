// One client connection: runs the startup handshake, then handles one message at a time from its
// inbox (client-in.ts): simple queries, extended-protocol batches, COPY, against the backends it
// holds (engage.ts, run.ts). Transaction state lives here; what each statement does is decided by
// routing/route.ts.
import type { Socket } from 'node:net';
import {
  ProtocolError,
  READY_FOR_QUERY_FAILED,
  READY_FOR_QUERY_IDLE,
  READY_FOR_QUERY_IN_TRANSACTION,
  type TransactionStatus,
} from '@tessera/pg-wire';
import type { Backend } from '../pool/backend.js';
import type { ScramPassThrough } from '../pool/scram-pass-through.js';
import type { Pool } from '../pool/pool.js';
import type { Snapshot } from '@tessera/keyspace';
import type { RouterServices } from '../services.js';
import { RouterError, SQLSTATE, sqlstateOf } from '../errors.js';
import type { Cancellable } from '../cancel.js';
import { ClientIn, type InMsg } from './client-in.js';
import { ClientOut } from './client-out.js';
import { errorFields, errorFrame } from './errors-wire.js';
import { SessionSettings } from './settings.js';
import { preparedRun, type StatementRecord } from './statements.js';
import { runStartup } from './startup.js';
import { handleQuery } from './simple-query.js';
import { handleBatch } from './extended.js';
import { runPipelined } from './pipelined.js';
import { beginHere, runHeld } from './held.js';
import { TxnMachine, type PartStatus } from '../txn/machine.js';
import type { ExchangeHooks } from './exchange.js';

interface Held {
  readonly backend: Backend;
  readonly pool: Pool;
}

/** How long a closing connection may take to deliver its last frames before it is cut. */
const CLOSE_GRACE_MS = 2000;

export class Session implements Cancellable {
  /** The client connection; replaced by its TLS session after SSLRequest (useSocket). */
  socket: Socket;
  out: ClientOut;
  /** The client's SCRAM key for logging in to nodes as its role; memory only, never logged. */
  passThrough: ScramPassThrough | undefined;
  encrypted = false;
  /** The read side: frames, the inbox, backpressure (client-in.ts). */
  readonly input: ClientIn = new ClientIn(this);
  pid = 0;
  secret = 0;
  database = '';
  user = '';
  readonly settings = new SessionSettings();
  readonly statements = new Map<string, StatementRecord>();

  /** The transaction: deferred BEGIN, its nodes, replay log, savepoints (txn/machine.ts). */
  readonly txn = new TxnMachine<Map<string, string>>();
  /** The settings now, for the transaction to restore if it rolls back. */
  readonly saveSettings = (): Map<string, string> => this.settings.save();
  /** The node the open transaction started on (statements any node answers go there). */
  get txnNode(): string | undefined {
    return this.txn.first;
  }
  /** An extended-protocol cycle dispatched at a Flush keeps its backend until the Sync. */
  cycleOpen = false;
  /** The node of the open cycle. */
  cycleNode: string | undefined;
  /** After an error the router raised in an extended batch: drop messages until Sync. */
  skipUntilSync = false;
  readonly held = new Map<string, Held>();
  /** What every exchange of this session reports to (run.ts), made on first use. */
  exchangeHooks: ExchangeHooks | undefined;
  /** Backends an exchange runs on now (run.ts): where a CancelRequest goes. */
  readonly running: Backend[] = [];
  /** Pools by node, remembered per catalog snapshot (engage.ts poolFor). */
  poolsCatalog: Snapshot | undefined;
  readonly poolsByNode = new Map<string, Pool>();

  closed = false;
  /** Set when the connection is over --max-clients: answered after its startup packet. */
  refusal: RouterError | undefined;

  /**
   * `open` gives the client socket; it may deliver reads to the callback it is given instead of
   * emitting 'data' (client-socket.ts).
   */
  constructor(
    open: (onBytes: (chunk: Buffer) => void) => Socket,
    readonly services: RouterServices,
    private readonly onEnd: (s: Session) => void,
  ) {
    const socket = open(this.onSocketData);
    this.socket = socket;
    this.out = new ClientOut(socket);
    socket.setNoDelay(true);
    this.listen(socket);
  }

  private readonly onSocketData = (chunk: Buffer): void => this.input.onData(chunk);
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

  /** Logs the client in, then serve() takes over; never rejects. */
  async run(): Promise<void> {
    const loginTimer = setTimeout(() => {
      this.fatal(new RouterError('08006', 'the client did not log in in time', 'FATAL'));
    }, this.services.config.loginTimeoutMs);
    try {
      const ok = await runStartup(this).finally(() => clearTimeout(loginTimer));
      if (!ok) return this.close();
    } catch (e) {
      this.fatal(e);
      return this.close();
    }
    // From now on the inbox calls serve() as messages come.
    this.input.loggedIn(this.serve);
  }

  /** A message's handling is under way (serve() runs, or waits for a message's promise). */
  private serving = false;

  /**
   * Handles the inbox's messages in order, each to its end: those answered at once in this turn,
   * and after one that has to wait (a backend, the pool), on from when it is done. No promise and
   * no event-loop turn between messages that need none, or between a read and its handling.
   */
  private readonly serve = (): void => {
    if (this.serving) return;
    this.serving = true;
    const input = this.input;
    try {
      while (!this.closed && input.hasMessage) {
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
    this.fatal(e);
    this.close();
  };

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
        // The shape drivers send most goes lean paths (pipelined.ts, held.ts) when it qualifies.
        const run = preparedRun(this.statements, batch);
        if (run !== undefined) {
          const lean = runPipelined(this, batch, run);
          if (lean !== undefined) return lean;
          if (beginHere(this, batch, run)) return;
          const held = runHeld(this, batch, run);
          if (held !== undefined) return held;
        }
        return handleBatch(this, batch);
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
    return this.txn.status(this.partStatus);
  }

  /** What the backend holding `node`'s part last reported. */
  private readonly partStatus = (node: string): PartStatus | undefined => {
    const b = this.held.get(node)?.backend;
    if (b === undefined) return undefined;
    return b.dead ? 'lost' : b.status;
  };

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

  catalog(): Snapshot {
    const c = this.services.catalog();
    if (!c)
      throw new RouterError(
        SQLSTATE.cannotConnectNow,
        'the router has no valid catalog yet; retry shortly',
      );
    return c;
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
    this.input.notify();
    for (const [node, h] of this.held) {
      this.held.delete(node);
      // A backend mid-statement or mid-transaction is not reusable; the pool closes those.
      if (this.running.includes(h.backend)) h.backend.destroy('client went away');
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
