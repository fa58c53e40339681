// Test helper (not exported): the real coordinator as a child process, so a test can SIGKILL it
// at a chosen moment. Run from its TypeScript sources, as the test runner runs everything.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const MAIN = fileURLToPath(new URL('../../../../apps/coordinator/src/main.ts', import.meta.url));

export interface CoordinatorProcess {
  /** host:port it serves gRPC on. */
  readonly address: string;
  readonly child: ChildProcess;
  /** Resolves once it holds the leader lock (a standby's resolves when it takes over). */
  readonly whenActive: Promise<void>;
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop that releases the lock), and wait. */
  stop(): Promise<void>;
}

export interface CoordinatorProcessOptions {
  graceMs: number;
  intervalMs: number;
}

export async function spawnCoordinator(
  catalogUrl: string,
  opts: CoordinatorProcessOptions,
): Promise<CoordinatorProcess> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=development',
      '--import',
      'tsx',
      MAIN,
      '--catalog-url',
      catalogUrl,
      '--listen',
      '127.0.0.1:0',
      '--metrics-port',
      '0',
      '--standby-poll-ms',
      '100',
      '--recovery-grace-ms',
      String(opts.graceMs),
      '--recovery-interval-ms',
      String(opts.intervalMs),
      '--log-level',
      'info', // its log lines are how this helper learns the address and the active moment
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let onListen!: (address: string) => void;
  let onActive!: () => void;
  const listening = new Promise<string>((resolve) => (onListen = resolve));
  const whenActive = new Promise<void>((resolve) => (onActive = resolve));
  // Its JSON log is how it says where it listens and when it becomes active.
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let entry: { msg?: string; listen?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    if (entry.msg?.startsWith('coordinator listening') && entry.listen) onListen(entry.listen);
    if (entry.msg === 'coordinator is active') onActive();
    if (process.env['TESSERA_TEST_COORDINATOR_LOG']) process.stderr.write(`${line}\n`);
  });
  const address = await Promise.race([
    listening,
    exited.then(() => {
      throw new Error('the coordinator process exited before it listened');
    }),
  ]);
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { address, child, whenActive, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
