// Test support (not exported): a minimal promise-based client connection over net.Socket built
// on FrameReader, so integration tests can speak to a real Postgres with our encoders/decoders.
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { FrameReader, type Frame } from './frame-reader.js';
import { BackendCode } from './codes.js';
import type { Writer } from './writer.js';

export class WireConn {
  private readonly reader = new FrameReader();
  /** Copies: views die at the next push, and tests hold frames across pushes. */
  private readonly queue: Frame[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private error: Error | undefined;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.reader.push(chunk);
      for (let f = this.reader.next(); f; f = this.reader.next())
        this.queue.push({ code: f.code, body: Buffer.from(f.body) });
      this.notify();
    });
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
    socket.on('error', (e) => {
      this.error = e;
      this.notify();
    });
  }

  static async open(port: number, host = '127.0.0.1'): Promise<WireConn> {
    const socket = connect(port, host);
    await once(socket, 'connect');
    return new WireConn(socket);
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  send(w: Writer): void {
    this.socket.write(w.flush());
  }

  async next(timeoutMs = 10_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length === 0) {
      if (this.error) throw this.error;
      if (this.closed) throw new Error('connection closed');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a frame');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    return this.queue.shift() as Frame;
  }

  /** Frames up to and including the next ReadyForQuery. */
  async untilReady(): Promise<Frame[]> {
    const out: Frame[] = [];
    while (true) {
      const f = await this.next();
      out.push(f);
      if (f.code === BackendCode.ReadyForQuery) return out;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The type bytes of frames as a string, e.g. "12TDCZ", for compact assertions. */
export function codes(frames: readonly Frame[]): string {
  return frames.map((f) => String.fromCharCode(f.code)).join('');
}
