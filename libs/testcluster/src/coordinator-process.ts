// A real coordinator as a child process, so a test can SIGKILL it at a chosen moment; a
// CoordinatorLauncher for startCluster. The caller says how to run the coordinator's main (node
// arguments before the flags): testkit is a library and does not know where apps live.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CoordinatorLauncher, LaunchedCoordinator } from './cluster.js';

export interface CoordinatorProcess extends LaunchedCoordinator {
  readonly child: ChildProcess;
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop that releases the lock), and wait. */
  stop(): Promise<void>;
}

export interface CoordinatorProcessOptions {
  /** Node arguments that run the coordinator's main, e.g. `['--import', 'tsx', '.../main.ts']`. */
  entry: readonly string[];
  /** Flags after --catalog-url, --listen, --metrics-port 0 and --log-level info. */
  args?: readonly string[];
  /** TESSERA_TEST_COORDINATOR_LOG=1 echoes its log lines on stderr. */
  env?: NodeJS.ProcessEnv;
}

/** A launcher that spawns the coordinator (see spawnCoordinatorProcess). */
export function coordinatorProcess(
  opts: CoordinatorProcessOptions,
): CoordinatorLauncher<CoordinatorProcess> {
  return (at) => spawnCoordinatorProcess(at.catalogUrl, at.listen, opts);
}

/**
 * Spawns the coordinator over `catalogUrl` on `listen`; resolves once it listens (a standby on a
 * catalog that has an active coordinator resolves too: `whenActive` says when it takes over).
 */
export async function spawnCoordinatorProcess(
  catalogUrl: string,
  listen: string,
  opts: CoordinatorProcessOptions,
): Promise<CoordinatorProcess> {
  const flags = ['--catalog-url', catalogUrl, '--listen', listen, '--metrics-port', '0'];
  // Its info log lines are how this helper learns the address and the active moment.
  const child = spawn(
    process.execPath,
    [...opts.entry, ...flags, ...(opts.args ?? []), '--log-level', 'info'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env },
  );
  // Its stderr is forwarded, not inherited: a process left running must not hold the test
  // runner's output open (which keeps the runner waiting with nothing printed).
  child.stderr!.pipe(process.stderr);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const { listening, whenActive } = watchLog(child, exited);
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
  // A standby stopped before it took over: nobody need be told.
  whenActive.catch(() => undefined);
  return { address, child, whenActive, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}

/** Its address once it listens; `whenActive` rejects if it exits first. */
function watchLog(
  child: ChildProcess,
  exited: Promise<void>,
): { listening: Promise<string>; whenActive: Promise<void> } {
  let onListen!: (address: string) => void;
  let onActive!: () => void;
  const listening = new Promise<string>((resolve) => (onListen = resolve));
  const whenActive = new Promise<void>((resolve, reject) => {
    onActive = resolve;
    void exited.then(() =>
      reject(new Error('the coordinator process exited before it was active')),
    );
  });
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
  return { listening, whenActive };
}
