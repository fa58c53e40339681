// One client connection's state: its socket, settings, prepared statements, the transaction
// (txn/machine.ts), the backends it holds and the portals the router runs for it. What reads
// the client's messages and dispatches them is connection.ts; what runs statements is protocol/
// and execute/, which take this object. The errors edge (errors-wire.ts) is here: sendError.
import type { Socket } from 'node:net';
import {
  READY_FOR_QUERY_FAILED,
  READY_FOR_QUERY_IDLE,
  READY_FOR_QUERY_IN_TRANSACTION,
  type TransactionStatus,
  BindStatementNames,
} from '@tessera/pg-wire';
import { BackendError, type Backend, type IdleOwner } from '../pool/backend.js';
import { SessionPins } from './pins.js';
import type { ScramPassThrough } from '../pool/scram-pass-through.js';
import type { Pool } from '../pool/pool.js';
import type { Snapshot } from '@tessera/keyspace';
import type { RouterServices } from '../services.js';
import type { Epoch } from '../catalog/epochs.js';
import { RouterError, SQLSTATE, sqlstateOf } from '../errors.js';
import type { Cancellable } from '../cancel.js';
import type { StatementRecord } from '../statement/prepared.js';
import type { RouterPortal } from '../statement/portal.js';
import { TxnMachine, type PartStatus } from '../txn/machine.js';
import { ClientIn } from './client-in.js';
import { ClientOut } from './client-out.js';
import { errorFields, errorFrame } from './errors-wire.js';
import { SessionSettings } from './settings.js';
import type { ExchangeHooks } from '../execute/exchange.js';

/** A read across nodes fetched in parts that the router runs for the session (scatter/cursor.ts). */
export interface OpenCursor {
  /** Its portal, or its SQL name. */
  readonly owner: object | string;
  /** How many savepoints the transaction had when it opened. */
  readonly depth: number;
  /** WITH HOLD: it outlives its transaction once that commits (`committed`). */
  readonly hold: boolean;
  committed: boolean;
  close(): Promise<void>;
  destroy(): void;
}

export interface HeldBackend {
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
  /** The statement names of the client's Binds, decoded once per distinct name in a row. */
  readonly bindNames = new BindStatementNames();
  /** Portals the router runs itself, by name (statement/portal.ts). */
  readonly portals = new Map<string, RouterPortal>();
  /** Reads across nodes fetched in parts, open now (scatter/cursor.ts). */
  readonly cursors = new Set<OpenCursor>();
  /**
   * SQL cursors of the open transaction by name: the node a one-node cursor was declared on, or
   * the router's own over a read across nodes. WITH HOLD cursors are pins (pins.ts) instead.
   */
  readonly sqlCursors = new Map<string, string | OpenCursor>();
  /** The transaction: deferred BEGIN, its nodes, replay log, savepoints (txn/machine.ts). */
  readonly txn = new TxnMachine<ReadonlyMap<string, string>>();
  /** The settings now, for the transaction to restore if it rolls back. */
  readonly saveSettings = (): ReadonlyMap<string, string> => this.settings.save();
  /** Backends this session holds, by node (a transaction, session pooling, an open cycle). */
  readonly held = new Map<string, HeldBackend>();
  /**
   * Nodes whose held backend has state that cannot move (temporary tables, session advisory
   * locks, WITH HOLD cursors, LISTEN): kept until the state is gone, closed rather than pooled
   * when the client leaves (pins.ts).
   */
  readonly pinned: SessionPins;
  /** Pinned nodes whose state a statement may have released (session/unpin.ts asks them). */
  unpinProbes: Set<string> | undefined = undefined;
  /**
   * What session/names.ts knows of the session's names (its login facts and last context): a
   * field rather than a WeakMap there, since it is read several times per statement.
   */
  nameFacts: unknown = undefined;
  /** protocol/admission.ts's view of the session's transaction for admit(), made once. */
  admitView: unknown = undefined;
  /** What the backends this session holds tell it between statements (notifications, a FATAL). */
  readonly idleOwner: IdleOwner = {
    notification: (frame) => {
      if (this.closed) return;
      this.out.push(frame);
      this.out.flush();
    },
    fatal: (fields) => this.fatal(new BackendError(fields)),
  };
  /** An extended-protocol cycle dispatched at a Flush keeps its node's backend until the Sync. */
  cycle: string | undefined;
  /** Epochs of the statements the open cycle sent, left at its Sync. */
  cycleEpochs: Epoch[] = [];
  /** After an error the router raised in an extended batch: drop messages until Sync. */
  skipUntilSync = false;
  /** What every exchange of this session reports to (execute/run.ts), made on first use. */
  exchangeHooks: ExchangeHooks | undefined;
  /** Backends an exchange runs on now (execute/run.ts): where a CancelRequest goes. */
  readonly running: Backend[] = [];
  /** Pools by node, remembered per catalog snapshot (execute/backends.ts poolFor). */
  poolsCatalog: Snapshot | undefined;
  readonly poolsByNode = new Map<string, Pool>();
  /** Set while a statement is held for a later epoch: a CancelRequest ends the wait. */
  cancelWait: (() => void) | undefined;

  closed = false;
  /** The ends of this session's waits for a busy pool, called if it goes first (Pool.acquire). */
  readonly poolWaits = new Set<() => void>();
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
    this.pinned = new SessionPins(services.metrics);
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

  /** The current epoch: what a statement is admitted under now. */
  epoch(): Epoch {
    const e = this.services.epoch();
    if (!e)
      throw new RouterError(
        SQLSTATE.cannotConnectNow,
        'the router has no valid catalog yet; retry shortly',
      );
    return e;
  }

  // ---- errors and the end ----

  /**
   * The error edge: anything thrown becomes one ErrorResponse with its SQLSTATE; what carries
   * none is XX000 and logged with its stack.
   */
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

  /**
   * Where a CancelRequest goes: every backend running one of this client's statements, those of
   * its exchanges and those a read across nodes holds (scatter/leaf-run.ts reads them itself).
   */
  *activeBackends(): Iterable<Backend> {
    yield* this.running;
    for (const h of this.held.values())
      if (h.backend.busy && !this.running.includes(h.backend)) yield h.backend;
  }

  /** A CancelRequest for this client: a held statement stops waiting (the backends are cancelled by the registry). */
  cancelWaiting(): void {
    this.cancelWait?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.input.notify();
    this.cancelWait?.();
    // Each end takes itself out of the set (deleting while iterating a Set is safe).
    for (const end of this.poolWaits) end();
    for (const c of this.cursors) c.destroy();
    for (const [node, h] of this.held) {
      this.held.delete(node);
      // A backend mid-statement or mid-transaction is not reusable; the pool closes those. One
      // with session state (pins.ts) must not serve anyone else either: the pool closes it.
      if (this.running.includes(h.backend)) h.backend.destroy('client went away');
      h.pool.release(h.backend);
    }
    this.pinned.clear();
    for (const e of this.cycleEpochs.splice(0)) e.leave();
    const socket = this.socket;
    socket.end();
    socket.destroySoon();
    // A peer that never reads (or a TLS handshake that never finished) would keep the socket,
    // and what is queued on it, forever: it gets a moment to take the last frames, no more.
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    this.onEnd(this);
  }
}
