// Writes the history as it happens (docs/soak.md, "History"): one JSON line per event, each
// stamped with the next index and the time since the history began on one monotonic clock
// (process.hrtime.bigint) of this one harness process, so indexes and times never go back.
import { createWriteStream, type WriteStream } from 'node:fs';
import type { EventType, HistoryEvent, ProcessId } from '../checker/history.js';

export class HistoryWriter {
  readonly #t0 = process.hrtime.bigint();
  readonly #out: WriteStream;
  #index = 0;
  #buffer: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** Every event also goes here (the live report reads it without re-reading the file). */
  readonly listeners: ((e: HistoryEvent) => void)[] = [];

  constructor(readonly path: string) {
    this.#out = createWriteStream(path, { flags: 'w' });
  }

  /** Nanoseconds since the history began. */
  now(): number {
    return Number(process.hrtime.bigint() - this.#t0);
  }

  write(process: ProcessId, type: EventType, f: string, value: unknown): HistoryEvent {
    const e: HistoryEvent = { index: this.#index++, time_ns: this.now(), process, type, f, value };
    this.#buffer.push(JSON.stringify(e, bigintsAsStrings));
    if (this.#buffer.length >= 512) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), 200);
    for (const l of this.listeners) l(e);
    return e;
  }

  /** A standalone info event of the nemesis, the setup or the probe. */
  note(
    process: 'nemesis' | 'setup' | 'probe' | 'harness',
    f: string,
    value: unknown,
  ): HistoryEvent {
    return this.write(process, 'info', f, value);
  }

  #flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#buffer.length === 0) return;
    this.#out.write(`${this.#buffer.join('\n')}\n`);
    this.#buffer = [];
  }

  /** Everything written so far is in the file once this resolves. */
  flush(): Promise<void> {
    this.#flush();
    return new Promise((resolve) => {
      if (this.#out.writableNeedDrain) this.#out.once('drain', () => resolve());
      else this.#out.write('', () => resolve());
    });
  }

  close(): Promise<void> {
    this.#flush();
    return new Promise((resolve) => this.#out.end(resolve));
  }
}

function bigintsAsStrings(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}
