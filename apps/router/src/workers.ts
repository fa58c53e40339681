// `--workers N`: N router processes on one port. The primary (node:cluster, round-robin) owns the
// listening socket and deals connections to the workers; each worker is a whole router with its
// own pools, catalog watcher and metrics port. CancelRequests for another worker's session are
// relayed through the primary, since the pid a client got says which worker holds it.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '@tessera/telemetry';
import type { RouterConfig } from './config.js';
import { CancelRegistry } from './cancel.js';
import { startRouter, type RunningRouter } from './router.js';

/** The environment variable telling a forked worker its index (internal, set by the primary). */
const WORKER_INDEX_ENV = 'TESSERA_WORKER_INDEX';

/** How soon a worker that crashed is replaced; a loop of crashes is not made into a busy loop. */
const RESPAWN_DELAY_MS = 500;

type Message =
  | { readonly t: 'tessera:ready' }
  | { readonly t: 'tessera:cancel'; readonly pid: number; readonly secret: number };

function isMessage(m: unknown): m is Message {
  return typeof m === 'object' && m !== null && typeof (m as { t?: unknown }).t === 'string';
}

export function isWorkerProcess(): boolean {
  return cluster.isWorker && process.env[WORKER_INDEX_ENV] !== undefined;
}

/**
 * The primary: forks `config.workers` workers and relays cancels between them. A worker that
 * dies after it was serving is replaced; one that fails to start stops everything (exit 1), since
 * its siblings would fail the same way. Resolves with a stop function (SIGTERM to every worker).
 */
export function runPrimary(config: RouterConfig, log: Logger): { stop(): Promise<void> } {
  const count = config.workers;
  cluster.schedulingPolicy = cluster.SCHED_RR;
  const workers: (Worker | undefined)[] = new Array<Worker | undefined>(count);
  const serving = new Set<number>();
  let stopping = false;
  let onAllExited: (() => void) | undefined;

  const alive = (): number => workers.filter((w) => w !== undefined).length;
  const fork = (index: number): void => {
    const w = cluster.fork({ [WORKER_INDEX_ENV]: String(index) });
    workers[index] = w;
    w.on('message', (m: unknown) => {
      if (!isMessage(m)) return;
      if (m.t === 'tessera:ready') {
        serving.add(index);
        if (serving.size === count) log.info({ workers: count }, 'router workers serving');
      } else if (m.t === 'tessera:cancel') {
        workers[CancelRegistry.workerOf(m.pid, count)]?.send(m);
      }
    });
    w.on('exit', (code, signal) => {
      workers[index] = undefined;
      if (stopping) {
        if (alive() === 0) onAllExited?.();
        return;
      }
      if (!serving.has(index)) {
        log.error({ worker: index, code, signal }, 'a router worker failed to start; stopping');
        void stop().then(() => process.exit(1));
        return;
      }
      serving.delete(index);
      log.warn({ worker: index, code, signal }, 'a router worker exited; starting another');
      setTimeout(() => {
        if (!stopping) fork(index);
      }, RESPAWN_DELAY_MS).unref();
    });
  };

  const stop = (): Promise<void> => {
    stopping = true;
    if (alive() === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      onAllExited = resolve;
      for (const w of workers) w?.process.kill('SIGTERM');
    });
  };

  for (let i = 0; i < count; i++) fork(i);
  return { stop };
}

/** In a worker: the router with this worker's share of the configuration, wired to the primary. */
export async function startWorker(config: RouterConfig): Promise<RunningRouter> {
  const index = Number(process.env[WORKER_INDEX_ENV]);
  const count = config.workers;
  const router = await startRouter(config, {
    worker: {
      index,
      count,
      // The primary works out the owner from the pid again: one rule, in CancelRegistry.
      forwardCancel: (_owner, pid, secret) => {
        process.send?.({ t: 'tessera:cancel', pid, secret } satisfies Message);
      },
      onRelayedCancel: (cancelLocal) => {
        process.on('message', (m: unknown) => {
          if (isMessage(m) && m.t === 'tessera:cancel') cancelLocal(m.pid, m.secret);
        });
      },
    },
  });
  process.send?.({ t: 'tessera:ready' } satisfies Message);
  return router;
}
