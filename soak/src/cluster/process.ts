// One supervised child process of the harness (a router, a coordinator, a link proxy): started
// in its network namespace, its output appended to a log file, its JSON log lines watched for
// readiness, and signals sent to it by pid (SIGKILL, SIGSTOP/SIGCONT) as faults ask.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { inNamespace } from '../net/netns.js';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Network namespace to run in; the harness's own when absent. */
  ns?: string | undefined;
  logFile: string;
}

export interface LogEntry {
  msg?: string;
  [field: string]: unknown;
}

export class ManagedProcess {
  #child: ChildProcess | undefined;
  #log: WriteStream;
  #lines: LogEntry[] = [];
  #waiters: { prefix: string; since: number; resolve: (e: LogEntry) => void }[] = [];
  #exited: Promise<void> = Promise.resolve();
  #expectExit = false;
  /** Called when the process exits without the harness having asked it to. */
  onUnexpectedExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  incarnation = 0;
  startedAtMs = 0;
  /** Extra environment for the next start only (e.g. a 2PC fault point). */
  nextEnv: Record<string, string> | undefined;

  constructor(readonly spec: ProcessSpec) {
    this.#log = createWriteStream(spec.logFile, { flags: 'a' });
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get running(): boolean {
    const c = this.#child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  get exited(): Promise<void> {
    return this.#exited;
  }

  start(): void {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    const env = { ...process.env, ...this.spec.env, ...this.nextEnv };
    this.nextEnv = undefined;
    const [command, args] = inNamespace(this.spec.ns, this.spec.command, this.spec.args);
    this.incarnation++;
    this.startedAtMs = Date.now();
    this.#expectExit = false;
    this.#lines = [];
    this.#log.write(
      `--- ${new Date().toISOString()} start #${this.incarnation}: ${command} ${args.join(' ')}\n`,
    );
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child = child;
    child.stdin!.on('error', () => {});
    child.stderr!.on('data', (d: Buffer) => this.#log.write(d));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.#log.write(`${line}\n`);
      let entry: LogEntry;
      try {
        entry = JSON.parse(line) as LogEntry;
      } catch {
        return;
      }
      this.#lines.push(entry);
      if (this.#lines.length > 2000) this.#lines.splice(0, 1000);
      this.#waiters = this.#waiters.filter((w) => {
        if (!String(entry.msg ?? '').startsWith(w.prefix)) return true;
        w.resolve(entry);
        return false;
      });
    });
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#log.write(
          `--- ${new Date().toISOString()} exit #${this.incarnation}: code ${code} signal ${signal}\n`,
        );
        resolve();
        if (!this.#expectExit) this.onUnexpectedExit?.(code, signal);
      });
      child.once('error', () => resolve());
    });
  }

  /** Writes one line to the process's stdin (the link proxy's control channel). */
  send(line: string): void {
    this.#child?.stdin?.write(`${line}\n`);
  }

  /** The first log entry of this incarnation whose msg starts with `prefix`. */
  waitForLog(prefix: string, timeoutMs: number): Promise<LogEntry> {
    const seen = this.#lines.find((e) => String(e.msg ?? '').startsWith(prefix));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
        reject(
          new Error(
            `${this.spec.name} did not log "${prefix}" within ${timeoutMs} ms (see ${this.spec.logFile})`,
          ),
        );
      }, timeoutMs);
      const done = (e: LogEntry): void => {
        clearTimeout(timer);
        resolve(e);
      };
      this.#waiters.push({ prefix, since: Date.now(), resolve: done });
      void this.#exited.then(() => {
        if (!this.running)
          setTimeout(() => {
            if (this.#waiters.some((w) => w.resolve === done)) {
              this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
              clearTimeout(timer);
              reject(
                new Error(
                  `${this.spec.name} exited before logging "${prefix}" (see ${this.spec.logFile})`,
                ),
              );
            }
          }, 50);
      });
    });
  }

  /** The latest log entry of this incarnation whose msg starts with `prefix`, if any. */
  lastLog(prefix: string): LogEntry | undefined {
    return this.#lines.findLast((e) => String(e.msg ?? '').startsWith(prefix));
  }

  /** Sends a signal; for SIGKILL/SIGTERM waits until the process is gone. */
  async signal(sig: NodeJS.Signals): Promise<void> {
    const c = this.#child;
    if (!c || !this.running) return;
    if (sig === 'SIGKILL' || sig === 'SIGTERM' || sig === 'SIGINT') this.#expectExit = true;
    try {
      process.kill(c.pid!, sig);
    } catch {
      return;
    }
    if (sig === 'SIGKILL' || sig === 'SIGTERM' || sig === 'SIGINT') await this.#exited;
  }

  /** The process says it is leaving on its own (a 2PC fault point): not unexpected. */
  expectExit(): void {
    this.#expectExit = true;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    const timer = setTimeout(() => void this.signal('SIGKILL'), graceMs);
    await this.signal('SIGTERM');
    clearTimeout(timer);
  }

  close(): void {
    this.#log.end();
  }
}
