// One mover: serves its metrics, claims jobs from the coordinator (up to --max-jobs at once) and
// runs each to its end (job/runner.ts). Stopping it stops its jobs where they are, without
// finishing them: their leases lapse, and the next mover (or this one restarted) resumes them.
import { JobState } from '@tessera/proto';
import { createLogger, createMetrics, startMetricsServer, type Logger } from '@tessera/telemetry';
import type { MoverConfig } from './config.js';
import { coordinatorClients } from './coordinator.js';
import { LeaseLost, errorText } from './errors.js';
import type { JobKind } from './job/kind.js';
import { runJob } from './job/runner.js';
import { JobRuntime, type MoverHooks } from './job/runtime.js';
import { JOB_KINDS } from './kinds/registry.js';
import { moverMetrics } from './metrics.js';
import { NodeSessions } from './nodes/sessions.js';

export interface StartOptions {
  log?: Logger;
  /** Kinds this mover runs (tests add their own); the registry's by default. */
  kinds?: readonly JobKind[];
  /** Test seams. */
  hooks?: MoverHooks;
}

export interface RunningMover {
  readonly metricsPort: number;
  readonly moverId: string;
  /** Ids of the jobs it runs now. */
  running(): bigint[];
  /** Stops claiming, stops every job where it is, closes everything. */
  stop(): Promise<void>;
}

export async function startMover(
  config: MoverConfig,
  opts: StartOptions = {},
): Promise<RunningMover> {
  const log =
    opts.log ??
    createLogger('mover', config.logLevel === undefined ? {} : { level: config.logLevel });
  const { registry } = createMetrics('mover');
  const metrics = moverMetrics(registry);
  const server = await startMetricsServer(registry, {
    host: config.metricsHost,
    port: config.metricsPort,
  });
  const coord = coordinatorClients(config.coordinator, config.token);
  const nodes = new NodeSessions({ user: config.nodeUser, password: config.nodePassword });
  const kinds = new Map((opts.kinds ?? JOB_KINDS).map((k) => [k.kind, k]));
  const running = new Map<bigint, { rt: JobRuntime; done: Promise<void> }>();
  let stopped = false;
  let wake: (() => void) | undefined;

  log.info(
    {
      moverId: config.moverId,
      coordinator: config.coordinator,
      metricsPort: server.port,
      kinds: [...kinds.keys()],
    },
    'mover started',
  );

  const start = (rt: JobRuntime, kind: JobKind) => {
    metrics.jobsRunning.inc();
    const done = runJob(rt, kind)
      .catch((e: unknown) => rt.log.error({ err: errorText(e) }, 'job runner crashed'))
      .finally(() => {
        running.delete(rt.id);
        metrics.jobsRunning.dec();
        // A job's lag is exported while it runs here, not for the rest of the mover's life.
        metrics.lagBytes.remove({ job: rt.id.toString() });
        wake?.();
      });
    running.set(rt.id, { rt, done });
  };

  const loop = (async () => {
    let backoff = config.pollMs;
    while (!stopped) {
      let claimed = false;
      if (running.size < config.maxJobs) {
        try {
          const { job } = await coord.jobs.claimJob({
            moverId: config.moverId,
            leaseMs: BigInt(config.leaseMs),
            running: [...running.keys()],
          });
          backoff = config.pollMs;
          if (job) {
            claimed = true;
            const kind = kinds.get(job.kind);
            const rt = new JobRuntime(job, {
              config,
              log,
              metrics,
              nodes,
              coord,
              hooks: opts.hooks,
            });
            if (!kind) {
              rt.log.error('no such job kind; failing the job');
              await coord.jobs
                .finishJob({
                  jobId: job.id,
                  moverId: config.moverId,
                  state: JobState.FAILED,
                  error: `this mover does not know job kind "${job.kind}" (known: ${[...kinds.keys()].join(', ')})`,
                })
                .catch(() => undefined);
            } else {
              rt.log.info(
                { phase: job.phase, takeovers: job.takeovers, state: job.state },
                'job claimed',
              );
              start(rt, kind);
            }
          }
        } catch (e) {
          log.warn({ err: errorText(e), retryInMs: backoff }, 'could not claim a job');
          backoff = Math.min(backoff * 2, 5_000);
        }
      }
      if (!claimed && !stopped)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, backoff);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      wake = undefined;
    }
  })();

  return {
    metricsPort: server.port,
    moverId: config.moverId,
    running: () => [...running.keys()],
    async stop() {
      if (stopped) return;
      stopped = true;
      wake?.();
      await loop;
      for (const { rt } of running.values()) rt.stop(new LeaseLost('the mover is stopping'));
      await Promise.all([...running.values()].map((r) => r.done));
      coord.close();
      await server.close();
      log.info({ moverId: config.moverId }, 'mover stopped');
    },
  };
}
