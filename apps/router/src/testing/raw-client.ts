// A bare protocol client for hostile-input tests: send arbitrary bytes, read whatever frames the
// router answers, see whether it closed the connection.
import { connect, type Socket } from 'node:net';
import {
  BackendCode,
  FrameReader,
  Writer,
  decodeErrorResponse,
  writeStartupMessage,
  type Frame,
} from '@tessera/pg-wire';

export class RawClient {
  private readonly reader = new FrameReader();
  private readonly frames: { code: number; body: Buffer }[] = [];
  closed = false;
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.reader.push(chunk);
      for (let f: Frame | undefined = this.reader.next(); f; f = this.reader.next())
        this.frames.push({ code: f.code, body: Buffer.from(f.body) });
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port });
      s.once('connect', () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  /** Connects and logs in as postgres (trust): returns once ReadyForQuery arrived. */
  static async login(port: number, database = 'postgres'): Promise<RawClient> {
    const c = await RawClient.open(port);
    c.send(writeStartupMessage(new Writer(), { user: 'postgres', database }).flush());
    await c.until((f) => f.code === BackendCode.ReadyForQuery);
    return c;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send(b: Buffer): void {
    this.socket.write(b);
  }

  /** Frames until (and including) one matching `pred`; rejects if the connection closes first. */
  async until(
    pred: (f: { code: number; body: Buffer }) => boolean,
    timeoutMs = 5000,
  ): Promise<{ code: number; body: Buffer }[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex(pred);
      if (i >= 0) return this.frames.splice(0, i + 1);
      if (this.closed)
        throw new Error(
          `connection closed; frames: ${this.frames.map((f) => String.fromCharCode(f.code)).join('')}`,
        );
      if (Date.now() > deadline) throw new Error('timed out waiting for a frame');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Every frame through the `n`th ReadyForQuery from here (a batch of `n` Syncs or Queries). */
  async throughReady(n: number): Promise<{ code: number; body: Buffer }[]> {
    const frames: { code: number; body: Buffer }[] = [];
    for (let i = 0; i < n; i++)
      frames.push(...(await this.until((f) => f.code === BackendCode.ReadyForQuery)));
    return frames;
  }

  /** Resolves true when the router closed the connection within the time. */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  errors(): string[] {
    return this.frames
      .filter((f) => f.code === BackendCode.ErrorResponse)
      .map((f) => decodeErrorResponse(f.body).code);
  }

  /** Severity and SQLSTATE of every ErrorResponse not yet taken by until(). */
  errorsWithSeverity(): string[] {
    return this.frames
      .filter((f) => f.code === BackendCode.ErrorResponse)
      .map((f) => {
        const e = decodeErrorResponse(f.body);
        return `${e.severity} ${e.code}`;
      });
  }

  end(): void {
    this.socket.destroy();
  }
}
