// A router in a process of its own, for tests that pause it (SIGSTOP) to play a router that
// cannot acknowledge an epoch in time: an in-process router cannot be stopped that way.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '@tessera/pgctl';

const ROUTER_MAIN = fileURLToPath(new URL('../../../router/src/main.ts', import.meta.url));

export interface RouterProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly exited: Promise<unknown>;
  /** SIGCONT (in case it is paused), then SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
}

/** Starts a router with id `routerId` and resolves once it routes by a catalog. */
export async function spawnRouter(coordinator: string, routerId: string): Promise<RouterProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--conditions=development',
      '--import',
      'tsx',
      ROUTER_MAIN,
      '--listen',
      `127.0.0.1:${port}`,
      '--coordinator',
      coordinator,
      '--metrics-port',
      '0',
      '--router-id',
      routerId,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TESSERA_LOG_LEVEL: 'info' } },
  );
  // Its stderr is forwarded, not inherited: a process left running must not hold the test
  // runner's output open (which keeps the runner waiting with nothing printed).
  child.stderr!.pipe(process.stderr);
  const exited = new Promise((r) => child.once('exit', r));
  const kill = async (): Promise<void> => {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.on('line', (l) => {
        if (l.includes('catalog swapped in')) resolve();
      });
      child.once('exit', () => reject(new Error(`router ${routerId} exited`)));
    });
  } catch (e) {
    await kill();
    throw e;
  }
  return { child, port, url: `postgresql://postgres@127.0.0.1:${port}/postgres`, exited, kill };
}
