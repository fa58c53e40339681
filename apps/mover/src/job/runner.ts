// Runs one claimed job to its end: the kind's run() (resumable), retried from the durable record
// after transient errors; on a cancel, or on a failure before the job's point of no return, the
// kind's undo() and then FinishJob. A job past its point of no return (a move after its flip) is
// never undone: it is retried until it finishes. A lost lease stops everything at once.
import { Code, JobState, RpcError } from '@tessera/proto';
import { CancelRequested, LeaseLost, errorText, isTransient } from '../errors.js';
import type { JobKind, Outcome } from './kind.js';
import { json, type JobRuntime } from './runtime.js';

const MAX_BACKOFF_MS = 30_000;

function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(attempt, 10));
}

export async function runJob(rt: JobRuntime, kind: JobKind): Promise<void> {
  rt.startRenewing();
  try {
    await drive(rt, kind);
  } finally {
    rt.stopRenewing();
  }
}

async function drive(rt: JobRuntime, kind: JobKind): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let outcome: Outcome;
    try {
      if (rt.job.state === JobState.CANCELLING) throw new CancelRequested('cancel asked for');
      rt.checkpoint();
      outcome = await kind.run(rt);
    } catch (e) {
      if (rt.leaseLost || e instanceof LeaseLost) {
        rt.log.warn({ err: errorText(e) }, 'stopped working on the job (it is not ours any more)');
        return;
      }
      // Whatever failed, the job may have been cancelled meanwhile: that decides.
      if (!(e instanceof CancelRequested)) await rt.refresh().catch(() => undefined);
      if (rt.leaseLost) return;
      if (
        e instanceof CancelRequested ||
        rt.cancelRequested ||
        rt.job.state === JobState.CANCELLING
      ) {
        await undoAndFinish(rt, kind, 'cancelled', '');
        return;
      }
      if (isTransient(e)) {
        rt.log.warn(
          { err: errorText(e), attempt },
          'transient failure; resuming the job from its record',
        );
        await waitOrStop(rt, backoffMs(attempt));
        continue;
      }
      if (rt.job.committed) {
        // Past the point of no return there is nothing to undo to: keep trying to finish.
        rt.log.error(
          { err: errorText(e), attempt },
          'the job failed after its point of no return; retrying it (fix the cause, see the error)',
        );
        await waitOrStop(rt, backoffMs(attempt + 4));
        continue;
      }
      rt.log.error({ err: errorText(e) }, 'job failed; undoing it');
      await undoAndFinish(rt, kind, 'failed', errorText(e));
      return;
    }
    await finish(
      rt,
      kind,
      outcome.state === 'done' ? JobState.DONE : JobState.VERIFY_FAILED,
      outcome.error ?? '',
      outcome.result,
    );
    return;
  }
}

async function waitOrStop(rt: JobRuntime, ms: number): Promise<void> {
  await rt.sleep(ms).catch(() => undefined);
}

async function undoAndFinish(
  rt: JobRuntime,
  kind: JobKind,
  why: 'cancelled' | 'failed',
  error: string,
): Promise<void> {
  rt.enterUndo();
  for (let attempt = 0; ; attempt++) {
    try {
      await kind.undo(rt, why);
      break;
    } catch (e) {
      if (rt.leaseLost || e instanceof LeaseLost) return;
      if (isTransient(e) || attempt < 5) {
        rt.log.warn({ err: errorText(e), attempt }, 'undo failed; retrying');
        await new Promise((r) => setTimeout(r, backoffMs(attempt)));
        continue;
      }
      await finish(
        rt,
        kind,
        JobState.FAILED,
        `${error || 'cancelled'}; undoing it failed too: ${errorText(e)} (its cleanup records list what is left: tessera jobs show ${rt.id})`,
        undefined,
      );
      return;
    }
  }
  await finish(
    rt,
    kind,
    why === 'cancelled' ? JobState.CANCELLED : JobState.FAILED,
    error,
    undefined,
  );
}

async function finish(
  rt: JobRuntime,
  kind: JobKind,
  state: JobState,
  error: string,
  result: unknown,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rt.coord.jobs.finishJob({
        jobId: rt.id,
        moverId: rt.moverId,
        state,
        error,
        resultJson: result === undefined ? '' : json(result),
      });
      rt.metrics.jobsFinished.inc({ kind: kind.kind, state: JobState[state] ?? String(state) });
      rt.log.info({ state: JobState[state], error: error || undefined }, 'job finished');
      return;
    } catch (e) {
      if (e instanceof RpcError && e.code === Code.FAILED_PRECONDITION) {
        rt.log.warn({ err: e.details }, 'could not finish the job (it is not ours any more)');
        return;
      }
      if (!isTransient(e) || attempt > 120) throw e;
      await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }
}
