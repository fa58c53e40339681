// Every process the harness starts (coordinator, routers, pgbouncer, the pass-through proxy,
// pgbench) goes through here, so all of them are stopped at the end, on Ctrl-C, and even when the
// harness dies of an exception. Postgres servers are the test kit's job (it has its own exit hook).
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let hooked = false;

function installHooks(): void {
  if (hooked) return;
  hooked = true;
  // 'exit' handlers must be synchronous: SIGKILL is the only certain way to leave nothing behind.
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping everything it started\n`);
      process.exit(130);
    });
  }
}

export interface Started {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Output captured so far (stdout and stderr interleaved, last 64 KiB). */
  output(): string;
  /** Resolves with the exit code (signal -> -1) when the process ends. */
  readonly exited: Promise<number>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const OUTPUT_LIMIT = 64 * 1024;

/** Spawns a tracked child with stdout/stderr captured (not inherited: runs must stay quiet). */
export function startProcess(
  command: string,
  args: readonly string[],
  opts: SpawnOptions = {},
): Started {
  installHooks();
  const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.length > OUTPUT_LIMIT) out = out.slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (code) => {
      live.delete(child);
      resolve(code ?? -1);
    });
    child.once('error', (e) => {
      live.delete(child);
      keep(Buffer.from(`\n${e.message}\n`));
      resolve(-1);
    });
  });
  return {
    child,
    pid: child.pid ?? -1,
    output: () => out,
    exited,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null || !live.has(child)) return;
      child.kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
      if (!done) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs a tracked child to completion, killing it after `timeoutMs`. */
export async function runProcess(
  command: string,
  args: readonly string[],
  opts: SpawnOptions & { timeoutMs: number },
): Promise<RunResult> {
  installHooks();
  const { timeoutMs, ...spawnOpts } = opts;
  const child = spawn(command, args, { ...spawnOpts, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const code = await new Promise<number>((resolve) => {
    // 'close', not 'exit': only then has all of the child's output been read.
    child.once('close', (c) => resolve(c ?? -1));
    child.once('error', (e) => {
      stderr += e.message;
      resolve(-1);
    });
  });
  clearTimeout(timer);
  live.delete(child);
  return { code, stdout, stderr, timedOut };
}

/** Polls `check` until it resolves true or `timeoutMs` passes. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(intervalMs);
  }
  return false;
}

/** A fresh directory under the system temp dir, removed by `dispose()` or at exit at the latest. */
export function tempDir(prefix: string): { path: string; dispose(): void } {
  installHooks();
  const path = mkdtempSync(join(tmpdir(), `tessera-bench-${prefix}-`));
  tempDirs.add(path);
  return {
    path,
    dispose() {
      rmSync(path, { recursive: true, force: true });
      tempDirs.delete(path);
    },
  };
}
