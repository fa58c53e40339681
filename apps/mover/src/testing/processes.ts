// Test helper: a mover as a child process run from its TypeScript sources, so a test can SIGKILL
// it (or let it SIGKILL itself at a kill point, TESSERA_MOVER_FAULT=<phase>). Its JSON log lines
// are parsed; TESSERA_TEST_PROCESS_LOG=1 echoes them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('..', import.meta.url));
const MOVER_MAIN = join(SRC, 'main.ts');
const MOVER_DIST = join(SRC, '..', 'dist', 'main.js');

function newestMs(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(
      newest,
      e.isDirectory() ? newestMs(p) : e.name.endsWith('.ts') ? statSync(p).mtimeMs : 0,
    );
  }
  return newest;
}

/** The built mover when it is newer than its sources (starts in a second), else the sources. */
function moverEntry(): string[] {
  if (existsSync(MOVER_DIST) && statSync(MOVER_DIST).mtimeMs >= newestMs(SRC)) return [MOVER_DIST];
  return ['--conditions=development', '--import', 'tsx', MOVER_MAIN];
}

export interface MoverProcess {
  readonly child: ChildProcess;
  readonly log: { msg?: string; [k: string]: unknown }[];
  /** Resolves with the signal that ended it (null for a normal exit). */
  readonly exited: Promise<NodeJS.Signals | null>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export function spawnMover(opts: {
  coordinator: string;
  moverId: string;
  fault?: string;
  leaseMs?: number;
  extraArgs?: string[];
}): MoverProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, TESSERA_LOG_LEVEL: 'info' };
  if (opts.fault) env['TESSERA_MOVER_FAULT'] = opts.fault;
  else delete env['TESSERA_MOVER_FAULT'];
  const child = spawn(
    process.execPath,
    [
      ...moverEntry(),
      '--coordinator',
      opts.coordinator,
      '--mover-id',
      opts.moverId,
      '--metrics-port',
      '0',
      '--lease-ms',
      String(opts.leaseMs ?? 3_000),
      '--poll-ms',
      '50',
      '--catchup-budget-ms',
      '200',
      '--delete-rows-per-sec',
      '0',
      ...(opts.extraArgs ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  // Its stderr is forwarded, not inherited: a process left running must not hold the test
  // runner's output open (which keeps the runner waiting with nothing printed).
  child.stderr!.pipe(process.stderr);
  const log: MoverProcess['log'] = [];
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      log.push(JSON.parse(line) as MoverProcess['log'][number]);
    } catch {
      return;
    }
    if (process.env['TESSERA_TEST_PROCESS_LOG']) process.stderr.write(`${line}\n`);
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { child, log, exited, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
