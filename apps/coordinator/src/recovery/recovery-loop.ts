// The active coordinator's background recovery: every interval, settle the prepared transactions
// on every node (in-doubt.ts) and delete decision rows that are no longer needed
// (decision-cleanup.ts). One pass at a time; a failed pass is logged and the next one tries again.
import type pg from 'pg';
import type { Logger } from '@tessera/telemetry';
import { cleanupDecisions } from './decision-cleanup.js';
import type { InDoubtResolver, Pass } from './in-doubt.js';
import type { RecoveryMetrics } from './metrics.js';
import { errorText } from './node-sessions.js';

export interface RecoveryLoopOptions {
  resolver: InDoubtResolver;
  /** The catalog pool, for cleaning the decision log. */
  pool: pg.Pool;
  /** Pause between passes; 0 disables the loop (Resolve still works). */
  intervalMs: number;
  /** How long a finished decision row is kept. */
  retentionMs: number;
  log: Logger;
  metrics?: RecoveryMetrics;
}

export interface RecoveryLoop {
  /** Runs one pass now (waiting for one in progress first). */
  runOnce(): Promise<Pass>;
  /** Stops scheduling passes and waits for the current one. */
  stop(): Promise<void>;
}

export function startRecoveryLoop(opts: RecoveryLoopOptions): RecoveryLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const pass = async (): Promise<Pass> => {
    const result = await opts.resolver.sweep();
    if (result.committed + result.rolledBack > 0 || result.left > 0)
      opts.log.info(
        {
          committed: result.committed,
          rolledBack: result.rolledBack,
          left: result.left,
          unreachable: result.scan.unreachable.map((u) => u.node),
        },
        'recovery pass',
      );
    const deleted = await cleanupDecisions(opts.pool, {
      reached: result.scan.reached,
      present: result.present,
      retentionMs: opts.retentionMs,
      log: opts.log,
    });
    opts.metrics?.cleaned.inc(deleted);
    return result;
  };

  const runOnce = (): Promise<Pass> => {
    const next = running.then(pass, pass);
    running = next.catch(() => undefined);
    return next;
  };

  const schedule = (): void => {
    if (stopped || opts.intervalMs <= 0) return;
    timer = setTimeout(() => {
      runOnce()
        .catch((e: unknown) =>
          opts.log.warn({ err: errorText(e) }, 'recovery pass failed; will retry'),
        )
        .finally(schedule);
    }, opts.intervalMs);
    timer.unref();
  };
  schedule();

  return {
    runOnce,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
