// Test helper: the real coordinator and the real router as child processes run from their
// TypeScript sources, so a test can SIGKILL either (or the router can kill itself at a 2PC fault
// point, TESSERA_FAULT_2PC). Each is told apart by its JSON log lines on stdout, which is also how
// it says where it listens and when it is ready. The idea of libs/twopc's coordinator-process.ts,
// not an import of it: test helpers stay in their package.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const COORDINATOR_MAIN = fileURLToPath(
  new URL('../../../coordinator/src/main.ts', import.meta.url),
);
const ROUTER_MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

export interface LogEntry {
  msg?: string;
  [field: string]: unknown;
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Every JSON log line so far, parsed. */
  readonly log: LogEntry[];
  /** Resolves with the first entry (already seen or to come) whose msg starts with `prefix`. */
  waitForLog(prefix: string): Promise<LogEntry>;
  /** Resolves with the signal that ended it (null for a normal exit). */
  readonly exited: Promise<NodeJS.Signals | null>;
  /** SIGKILL, and wait for it to be gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop), and wait. */
  stop(): Promise<void>;
}

function spawnService(main: string, args: string[], env: NodeJS.ProcessEnv): ServiceProcess {
  const child = spawn(
    process.execPath,
    ['--conditions=development', '--import', 'tsx', main, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    },
  );
  // Its stderr is forwarded, not inherited: a process left running must not hold the test
  // runner's output open (which keeps the runner waiting with nothing printed).
  child.stderr!.pipe(process.stderr);
  const log: LogEntry[] = [];
  const waiters: { prefix: string; resolve: (e: LogEntry) => void }[] = [];
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let entry: LogEntry;
    try {
      entry = JSON.parse(line) as LogEntry;
    } catch {
      return;
    }
    log.push(entry);
    for (const w of waiters) if (entry.msg?.startsWith(w.prefix)) w.resolve(entry);
    if (process.env['TESSERA_TEST_PROCESS_LOG']) process.stderr.write(`${line}\n`);
  });
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    child,
    log,
    waitForLog: (prefix) =>
      new Promise<LogEntry>((resolve, reject) => {
        const seen = log.find((e) => e.msg?.startsWith(prefix));
        if (seen !== undefined) return resolve(seen);
        waiters.push({ prefix, resolve });
        // The last lines may still be in the pipe when 'exit' fires: give them a turn.
        void exited.then(() =>
          setTimeout(() => reject(new Error(`${main} exited before logging "${prefix}"`)), 50),
        );
      }),
    exited,
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
  };
}

export interface CoordinatorProcess extends ServiceProcess {
  /** host:port of its gRPC server. */
  readonly address: string;
}

export interface CoordinatorProcessOptions {
  /** host:port to listen on; default a free port (a restart passes the old address). */
  listen?: string;
  recoveryGraceMs: number;
  recoveryIntervalMs: number;
}

/** Starts a coordinator over `catalogUrl` and resolves once it is the active one. */
export async function startCoordinatorProcess(
  catalogUrl: string,
  opts: CoordinatorProcessOptions,
): Promise<CoordinatorProcess> {
  const p = spawnService(
    COORDINATOR_MAIN,
    [
      ...['--catalog-url', catalogUrl, '--listen', opts.listen ?? '127.0.0.1:0'],
      ...['--metrics-port', '0', '--standby-poll-ms', '100', '--log-level', 'info'],
      ...['--recovery-grace-ms', String(opts.recoveryGraceMs)],
      ...['--recovery-interval-ms', String(opts.recoveryIntervalMs)],
    ],
    process.env,
  );
  const listening = await p.waitForLog('coordinator listening');
  await p.waitForLog('coordinator is active');
  return { ...p, address: String(listening['listen']) };
}

export interface RouterProcess extends ServiceProcess {
  readonly port: number;
}

export interface RouterProcessOptions {
  coordinator: string;
  routerId: string;
  /** Extra environment, e.g. TESSERA_FAULT_2PC. */
  env?: Record<string, string>;
}

/** Starts `tessera-router` on a free port and resolves once it routes by a catalog. */
export async function startRouterProcess(opts: RouterProcessOptions): Promise<RouterProcess> {
  const p = spawnService(
    ROUTER_MAIN,
    [
      ...['--listen', '127.0.0.1:0', '--metrics-port', '0'],
      ...['--coordinator', opts.coordinator, '--router-id', opts.routerId],
    ],
    // info: the fault hook's lines and 'catalog swapped in' are what the test waits for.
    { ...process.env, TESSERA_LOG_LEVEL: 'info', ...opts.env },
  );
  const listening = await p.waitForLog('router listening');
  await p.waitForLog('catalog swapped in');
  const port = Number(String(listening['listen']).split(':').pop());
  return { ...p, port };
}
