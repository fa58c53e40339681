// What the agent does to its instance's server process (native mode, with --data-dir): kill it
// with everything it started (fencing must work on a frozen postmaster too, so SIGKILL), start
// it, and the fence marker that keeps a former primary down across agent restarts until rejoin.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, readPostmasterPid, serverProcesses, startServer } from '@tessera/pgctl';

export const FENCE_MARKER = 'tessera-fenced';

export interface ServerControlOptions {
  dataDir: string;
  port: number;
  binDir?: string | undefined;
  logFile?: string | undefined;
}

export class ServerControl {
  constructor(readonly opts: ServerControlOptions) {}

  get dataDir(): string {
    return this.opts.dataDir;
  }

  /** The postmaster's pid while it runs. */
  runningPid(): number | undefined {
    const pm = readPostmasterPid(this.opts.dataDir);
    return pm && isAlive(pm.pid) ? pm.pid : undefined;
  }

  /** Whether the data directory is a standby's (standby.signal present). */
  isStandbyDir(): boolean {
    return existsSync(join(this.opts.dataDir, 'standby.signal'));
  }

  /** SIGKILL to the postmaster and every child; resolves once the postmaster is gone. */
  async kill(timeoutMs = 10_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const pids = serverProcesses(this.opts.dataDir).filter(isAlive);
      const pm = this.runningPid();
      if (pids.length === 0 && pm === undefined) return;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      if (performance.now() > deadline)
        throw new Error(`the server of ${this.opts.dataDir} is still running after SIGKILL`);
      await sleep(20);
    }
  }

  /** Starts the server (detached, so it outlives the agent); resolves once it accepts connections. */
  async start(): Promise<number> {
    const running = this.runningPid();
    if (running !== undefined) return running;
    return startServer(this.opts.dataDir, {
      port: this.opts.port,
      detached: true,
      ...(this.opts.binDir !== undefined ? { binDir: this.opts.binDir } : {}),
      ...(this.opts.logFile !== undefined ? { logFile: this.opts.logFile } : {}),
      timeoutMs: 120_000,
    });
  }

  isFenced(): boolean {
    return existsSync(join(this.opts.dataDir, FENCE_MARKER));
  }

  fence(reason: string): void {
    writeFileSync(
      join(this.opts.dataDir, FENCE_MARKER),
      JSON.stringify({ at: new Date().toISOString(), reason }) + '\n',
    );
  }

  unfence(): void {
    rmSync(join(this.opts.dataDir, FENCE_MARKER), { force: true });
  }

  fenceReason(): string {
    try {
      return (
        (
          JSON.parse(readFileSync(join(this.opts.dataDir, FENCE_MARKER), 'utf8')) as {
            reason?: string;
          }
        ).reason ?? ''
      );
    } catch {
      return '';
    }
  }
}
