// The client socket's read side: frames become whole messages in an inbox the session takes one
// at a time, without an event-loop turn while any are there. The socket pauses while the inbox is
// over its mark; before login, nothing beyond what the handshake can use is buffered.
import { FrameReader, WholeFrame } from '@tessera/pg-wire';
import { errorFields, errorFrame } from './errors-wire.js';
import type { Socket } from 'node:net';

/** One client message, whole (`raw`) with its body as a view of it (FrameReader.nextWhole). */
export type InMsg = WholeFrame;

/** Inbox size at which the client socket is paused until the session catches up. */
const INBOX_HIGH_BYTES = 4 * 1024 * 1024;
const MAX_PRE_LOGIN_FRAME = 64 * 1024;
/** Unread bytes held before login (a startup packet and one message): beyond, stop reading. */
const PRE_LOGIN_BUFFER_BYTES = 10_000 + MAX_PRE_LOGIN_FRAME + 5;
const MAX_FRAME = 1 << 30;

/** What the read side needs of its session. */
export interface ClientInHost {
  readonly socket: Socket;
  readonly closed: boolean;
  fatal(e: unknown): void;
}

export class ClientIn {
  readonly reader = new FrameReader({ maxFrameLength: MAX_PRE_LOGIN_FRAME });
  private inbox: InMsg[] = [];
  private inboxBytes = 0;
  private wake: (() => void) | undefined;
  private paused = false;
  private startupPhase = true;

  /** Reads for `s`, through whichever socket it has now (s.socket changes at the TLS upgrade). */
  constructor(private readonly s: ClientInHost) {}

  /** Whether a message is waiting (takeMessage() then needs no event-loop turn). */
  get hasMessage(): boolean {
    return this.inbox.length > 0;
  }

  /** Called as messages arrive once logged in (and when the connection closes). */
  private onMessages: (() => void) | undefined;

  /** Logged in: messages of any size are read into the inbox as they come, `onMessages` told. */
  loggedIn(onMessages: () => void): void {
    this.onMessages = onMessages;
    this.startupPhase = false;
    this.s.socket.resume(); // paused if the client sent ahead of its login
    this.reader.setMaxFrameLength(MAX_FRAME);
    this.drainFrames();
  }

  onData(chunk: Buffer): void {
    if (this.s.closed) return;
    try {
      this.reader.push(chunk);
    } catch (e) {
      return this.s.fatal(e);
    }
    if (this.startupPhase) {
      // Nobody is trusted before login: hold no more than the handshake can use, read on only
      // when it asks (waitData), so a client cannot make the router buffer without bound.
      if (this.reader.buffered > PRE_LOGIN_BUFFER_BYTES) this.s.socket.pause();
      this.notify();
      return;
    }
    this.drainFrames();
  }

  private drainFrames(): void {
    try {
      for (let m = this.reader.nextWhole(); m; m = this.reader.nextWhole()) {
        // Views of what was received, valid as long as they are held (FrameReader).
        this.inbox.push(m);
        this.inboxBytes += m.raw.length;
      }
    } catch (e) {
      // A bad length: the stream is out of sync. Answer after what was already queued.
      const { fields } = errorFields(e);
      this.inbox.push(WholeFrame.of(-1, errorFrame({ ...fields, severity: 'FATAL' })));
      this.s.socket.pause();
    }
    if (this.inboxBytes > INBOX_HIGH_BYTES && !this.paused) {
      this.paused = true;
      this.s.socket.pause();
    }
    this.notify();
  }

  /** Wakes whoever waits for data (also when the connection closes). */
  notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
    this.onMessages?.();
  }

  /** Resolves when more bytes arrived (startup phase) or the connection closed. */
  waitData(): Promise<void> {
    if (this.s.closed) return Promise.resolve();
    if (this.startupPhase) this.s.socket.resume();
    return new Promise((resolve) => (this.wake = resolve));
  }

  /** The next client message, or undefined once the connection closed. */
  async nextMessage(): Promise<InMsg | undefined> {
    while (this.inbox.length === 0) {
      if (this.s.closed) return undefined;
      await this.waitData();
    }
    return this.takeMessage();
  }

  /** The first message of the inbox; only when hasMessage. */
  takeMessage(): InMsg {
    const m = this.inbox.shift()!;
    this.inboxBytes -= m.raw.length;
    if (this.paused && this.inboxBytes < INBOX_HIGH_BYTES / 2) {
      this.paused = false;
      this.s.socket.resume();
    }
    return m;
  }

  /** Puts a message back at the front (a COPY that ended early). */
  unshift(m: InMsg): void {
    this.inbox.unshift(m);
    this.inboxBytes += m.raw.length;
  }
}
