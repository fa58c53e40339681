// One raw protocol connection from the router to a node, logged in as a client's role. Frames are
// read with one reused FrameReader; while a session uses the backend it is the backend's sink and
// pulls the frames itself, so responses can be forwarded as views without decoding.
import { connect, type Socket } from 'node:net';
import {
  BackendCode,
  TERMINATE,
  FrameReader,
  Writer,
  decodeBackendKeyData,
  decodeErrorResponse,
  decodeParameterStatus,
  decodeReadyForQuery,
  frameBytes,
  writeStartupMessage,
  type Frame,
  type TransactionStatus,
} from '@tessera/pg-wire';
import { RouterError } from '../errors.js';
import { readInto } from './read-buffer.js';
import { writePieces } from '../socket-write.js';
import { LoginAuth, unreachable } from './backend-login.js';
import { CANCEL_RESEND_MS, CANCEL_TRIES, sendCancelRequest } from './cancel-request.js';
import type { ScramPassThrough } from './scram-pass-through.js';
import { BackendError, type BackendTarget, type IdleOwner } from './backend-types.js';

export { BackendError, type BackendTarget, type IdleOwner } from './backend-types.js';

/** What a session registers to receive a backend's frames while it uses it. */
export interface BackendSink {
  /** Whose statement this is (a cancel for a pipelined statement waits until it is at the head). */
  readonly owner?: object;
  /** New bytes arrived (`chunk`); pull complete frames with backend.nextFrame(). */
  onReadable(backend: Backend, chunk: Buffer): void;
  /** The connection closed or failed; the backend is dead. */
  onClosed(backend: Backend, error: Error): void;
}

let nextId = 1;

export class Backend {
  readonly id = nextId++;
  /** The node's own BackendKeyData, for forwarding CancelRequests. */
  pid = 0;
  secret = 0;
  /** ParameterStatus values the node sent at login. */
  readonly params = new Map<string, string>();
  /** Server-side names of statements prepared on this connection. */
  readonly prepared = new Set<string>();
  /** The client statement record whose text the unnamed statement holds now. */
  unnamedOwner: object | undefined;
  /** The session settings script applied here ('' = as logged in). */
  settingsKey = '';
  status: TransactionStatus = 'I';
  dead = false;
  lastUsedMs = Date.now();
  /** Pipelined statements of several sessions sent and not yet answered (pool.lend). */
  inFlight = 0;
  /** Reads the backend may still take in its current turn as a lane (Pool.makeLane). */
  laneTurnsLeft = 0;
  /** When the statement now at the head of the sink queue became the one being answered. */
  headSinceMs = 0;
  /** Kept by its session for state that cannot be pooled: not counted in its pool (Pool.pinOut). */
  pinnedOut = false;
  /** The session holding this backend, while it does (execute/backends.ts). */
  idleOwner: IdleOwner | undefined;
  /** Names whose Parse is on its way: not usable by another pipelined statement until answered. */
  readonly parsing = new Set<string>();
  /** Frames received: nextFrame(), or nextCode() for a sink that forwards them unread. */
  readonly reader = new FrameReader();
  private sink: BackendSink | undefined;
  /** Sinks of pipelined statements behind the active one, in the order their messages went. */
  private readonly queued: BackendSink[] = [];
  /** Owners whose cancel waits until their statement is the one running. */
  private cancelWanted: Set<object> | undefined;
  /** CancelRequests sent and not yet delivered by the node (Backend.sendCancel). */
  cancelsInFlight = 0;
  private afterCancels: (() => void)[] | undefined;

  private constructor(
    readonly target: BackendTarget,
    private readonly socket: Socket,
  ) {}

  /**
   * Connects and logs in; rejects with BackendError (the node's refusal) or RouterError 08006.
   * A node asking SCRAM is answered with the client's own key (`passThrough`) when the client
   * logged in with SCRAM, else with the service password.
   */
  static connect(
    target: BackendTarget,
    timeoutMs: number,
    passThrough?: ScramPassThrough,
  ): Promise<Backend> {
    return new Promise((resolve, reject) => {
      // Bytes go to whatever handles them now: the login below, then listen().
      const socket = connect({
        host: target.host,
        port: target.port,
        onread: readInto((chunk) => backend.onChunk(chunk)),
      });
      socket.setNoDelay(true);
      const backend = new Backend(target, socket);
      let settled = false;
      const fail = (e: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        backend.dead = true;
        socket.destroy();
        reject(
          e instanceof BackendError || e instanceof RouterError
            ? e
            : unreachable(target, e.message),
        );
      };
      const timer = setTimeout(
        () => fail(unreachable(target, `no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const auth = new LoginAuth(target, passThrough);
      socket.on('error', fail);
      socket.on('close', () => fail(unreachable(target, 'the connection closed during login')));
      socket.on('connect', () => {
        const params: Record<string, string> = {
          user: target.user,
          database: target.database,
          client_encoding: 'UTF8',
        };
        if (target.applicationName !== undefined)
          params['application_name'] = target.applicationName;
        socket.write(writeStartupMessage(new Writer(), params).flush());
      });
      const onData = (chunk: Buffer): void => {
        try {
          backend.reader.push(chunk);
          for (let f = backend.reader.next(); f; f = backend.reader.next()) {
            if (!backend.loginFrame(f, auth, socket) || settled) continue;
            settled = true;
            clearTimeout(timer);
            socket.removeAllListeners();
            backend.listen();
            resolve(backend);
            return;
          }
        } catch (e) {
          fail(e as Error);
        }
      };
      backend.onChunk = onData;
    });
  }

  /** One frame of the login exchange; true at its ReadyForQuery. Throws the node's refusal. */
  private loginFrame(f: Frame, auth: LoginAuth, socket: Socket): boolean {
    switch (f.code) {
      case BackendCode.Authentication: {
        const reply = auth.answer(f.body);
        if (reply !== undefined) socket.write(reply);
        return false;
      }
      case BackendCode.ParameterStatus: {
        const p = decodeParameterStatus(f.body);
        this.params.set(p.name, p.value);
        return false;
      }
      case BackendCode.BackendKeyData: {
        const k = decodeBackendKeyData(f.body);
        this.pid = k.pid;
        this.secret = k.secret;
        return false;
      }
      case BackendCode.ErrorResponse:
        throw new BackendError(decodeErrorResponse(f.body));
      case BackendCode.ReadyForQuery:
        this.status = decodeReadyForQuery(f.body);
        return true;
      default:
        // NoticeResponse, NegotiateProtocolVersion: nothing to do at login.
        return false;
    }
  }

  /** What the socket read (read-buffer.ts): login messages first, then listen()'s handler. */
  private onChunk: (chunk: Buffer) => void = () => undefined;

  private listen(): void {
    this.onChunk = (chunk: Buffer) => {
      try {
        this.reader.push(chunk);
      } catch (e) {
        this.kill(e as Error);
        return;
      }
      let sink = this.sink;
      if (sink === undefined) return this.drainIdle();
      // A pipelined statement that finished hands the rest of the chunk to the next one.
      for (;;) {
        sink.onReadable(this, chunk);
        const next = this.sink;
        if (next === undefined || next === sink) return;
        sink = next;
      }
    };
    this.socket.on('error', (e) => this.kill(e));
    this.socket.on('close', () => this.kill(new Error('the connection closed')));
  }

  /**
   * Frames arriving while no statement runs here: a FATAL (shutdown, a timeout, a terminate)
   * kills it, and the session holding it, if any, hears of it and of notifications.
   */
  private drainIdle(): void {
    try {
      for (let f = this.reader.next(); f; f = this.reader.next()) {
        if (f.code === BackendCode.NotificationResponse) {
          this.idleOwner?.notification(Buffer.from(frameBytes(f)));
        } else if (f.code === BackendCode.ErrorResponse) {
          const fields = decodeErrorResponse(f.body);
          const owner = this.idleOwner;
          this.kill(new BackendError(fields));
          if (owner !== undefined && (fields.severityNonLocalized ?? fields.severity) === 'FATAL')
            owner.fatal(fields);
        }
      }
    } catch (e) {
      this.kill(e as Error);
    }
  }

  private kill(e: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
    const sink = this.sink;
    this.sink = undefined;
    sink?.onClosed(this, e);
    for (const q of this.queued.splice(0)) q.onClosed(this, e);
  }

  /** The next complete frame received, or undefined; its body is a view of what the node sent. */
  nextFrame(): Frame | undefined {
    return this.reader.next();
  }

  /** A statement's answer is being read now (a sink is attached). */
  get busy(): boolean {
    return this.sink !== undefined;
  }

  /** True when `sink` reads now; false when pipelined behind statements already sent. */
  attach(sink: BackendSink): boolean {
    if (this.sink !== undefined && this.sink !== sink) {
      this.queued.push(sink);
      return false;
    }
    if (this.sink === undefined) this.headSinceMs = Date.now();
    this.sink = sink;
    return true;
  }

  /** Ends `sink`'s turn (the next pipelined one takes over), or every turn when none is named. */
  detach(sink?: BackendSink): void {
    if (sink !== undefined && sink !== this.sink) {
      const i = this.queued.indexOf(sink);
      if (i >= 0) this.queued.splice(i, 1);
      return;
    }
    const next = sink === undefined ? undefined : this.queued.shift();
    if (sink === undefined) this.queued.length = 0;
    this.sink = next;
    if (next !== undefined) this.headSinceMs = Date.now();
    const owner = next?.owner;
    if (owner !== undefined && this.cancelWanted?.delete(owner)) this.cancelHead(next);
  }

  /**
   * Asks the node to cancel what runs here for `owner`: now, or, while another session's pipelined
   * statement runs (it would be the one cancelled), when `owner`'s turn comes.
   */
  cancelFor(owner: object): void {
    const head = this.sink;
    // A sink without an owner is the session's own reader (a read across nodes, leaf-run.ts).
    if (head === undefined || head.owner === undefined || head.owner === owner)
      return this.cancelHead(head);
    if (this.queued.some((q) => q.owner === owner)) (this.cancelWanted ??= new Set()).add(owner);
  }

  /**
   * Cancels the statement of `head`, sending again while that statement still runs with nothing
   * queued behind it (a cancel reaching the node between its messages is ignored, cancel-request.ts).
   */
  private cancelHead(head: BackendSink | undefined, tries = 1): void {
    void this.sendCancel().then(() => {
      if (head === undefined || tries >= CANCEL_TRIES) return;
      setTimeout(() => {
        if (this.sink === head && this.queued.length === 0 && !this.dead)
          this.cancelHead(head, tries + 1);
      }, CANCEL_RESEND_MS * tries).unref();
    });
  }

  /**
   * Sends a CancelRequest for this connection; resolves when the node has delivered it. Until then
   * the backend takes no other statement (Pool.lend, Pool.release): it could be the one cancelled.
   */
  sendCancel(): Promise<void> {
    this.cancelsInFlight++;
    return sendCancelRequest(this.target, this.pid, this.secret).then(() => {
      if (--this.cancelsInFlight > 0) return;
      const after = this.afterCancels;
      this.afterCancels = undefined;
      if (after !== undefined) for (const f of after) f();
    });
  }

  /** Runs `f` once no cancel is on its way to the node (now, when none is). */
  whenCancelsDelivered(f: () => void): void {
    if (this.cancelsInFlight === 0) return f();
    (this.afterCancels ??= []).push(f);
  }

  /** Writes; false when the socket's buffer is over its mark (await drained()). */
  write(data: Buffer | readonly Buffer[]): boolean {
    if (this.dead) return true;
    if (this.inFlight > 1 || this.outbox !== undefined) {
      // Pipelined behind other clients' statements: what the clients whose messages arrived in
      // this turn of the event loop send leaves in one write, read by the node in one go.
      if (this.outbox === undefined) {
        this.outbox = [];
        setImmediate(this.flushOutbox);
      }
      if (Array.isArray(data)) for (const b of data as readonly Buffer[]) this.outbox.push(b);
      else this.outbox.push(data as Buffer);
      return true;
    }
    return this.writeNow(data);
  }

  private writeNow(data: Buffer | readonly Buffer[]): boolean {
    return Array.isArray(data)
      ? writePieces(this.socket, data as readonly Buffer[])
      : this.socket.write(data as Buffer);
  }

  private outbox: Buffer[] | undefined;
  private readonly flushOutbox = (): void => {
    const pieces = this.outbox;
    this.outbox = undefined;
    if (pieces !== undefined && !this.dead) this.writeNow(pieces);
  };

  drained(): Promise<void> {
    if (this.dead || !this.socket.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** Stops reading (client backpressure) and resumes. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Closes the connection politely. */
  close(): void {
    if (this.dead) return;
    this.dead = true;
    this.sink = undefined;
    this.socket.end(TERMINATE);
    this.socket.destroySoon();
  }

  /** Kills the connection now (a protocol desync, a client that vanished mid-statement). */
  destroy(reason: string): void {
    this.kill(new Error(reason));
  }
}
