// Jobs that run other jobs (split with --move-to, merge, drain, rebalance): a child is submitted
// once with this job as its parent (found again by its spec after a crash, never submitted
// twice), its id recorded in the parent's step, and waited for. A child that fails fails the
// parent with the child's sentence.
import { JobState, type Job } from '@tessera/proto';
import { JobFailed } from '../errors.js';
import type { JobRuntime } from '../job/runtime.js';
import { MOVE_STEPS, type MoveSpec } from '../move/spec.js';

export interface ChildRequest {
  kind: string;
  spec: Record<string, unknown>;
  steps: readonly string[];
}

export function moveChild(spec: MoveSpec): ChildRequest {
  return { kind: 'move', spec: { ...spec }, steps: MOVE_STEPS };
}

const FINAL = new Set([JobState.DONE, JobState.FAILED, JobState.CANCELLED, JobState.VERIFY_FAILED]);

/** Submits the child (unless this parent already has one with the same spec) and returns its id. */
export async function submitChild(rt: JobRuntime, req: ChildRequest): Promise<bigint> {
  const specJson = JSON.stringify(req.spec);
  const existing = await rt.call(() => rt.coord.jobs.listJobs({ all: true, parentId: rt.id }));
  const same = existing.jobs.find(
    (j) =>
      j.kind === req.kind &&
      j.specJson.replace(/\s/g, '') === specJson.replace(/\s/g, '') &&
      j.state !== JobState.CANCELLED &&
      j.state !== JobState.FAILED,
  );
  if (same) return same.id;
  const job = await rt.call(() =>
    rt.coord.jobs.submitJob({ kind: req.kind, specJson, steps: [...req.steps], parentId: rt.id }),
  );
  rt.log.info(
    { child: job.id.toString(), childKind: req.kind, spec: req.spec },
    'child job submitted',
  );
  return job.id;
}

/** Waits for a child to end; throws JobFailed unless it is done. */
export async function awaitChild(rt: JobRuntime, id: bigint, what: string): Promise<Job> {
  for (;;) {
    rt.checkpoint();
    const job = await rt.call(() => rt.coord.jobs.getJob({ id }));
    if (FINAL.has(job.state)) {
      if (job.state === JobState.DONE) return job;
      throw new JobFailed(
        `${what} (job ${id}) ended ${JobState[job.state]?.toLowerCase()}: ${job.error || 'no reason given'}`,
      );
    }
    await rt.sleep(200);
  }
}

/** Runs a child to its end: submitted once, recorded under `key` in `step`'s progress. */
export async function runChild(
  rt: JobRuntime,
  step: string,
  key: string,
  req: ChildRequest,
  what: string,
): Promise<Job> {
  const progress = rt.step(step).progress;
  const children = { ...((progress['children'] as Record<string, string> | undefined) ?? {}) };
  let id = children[key] === undefined ? undefined : BigInt(children[key]);
  if (id === undefined) {
    id = await submitChild(rt, req);
    children[key] = id.toString();
    await rt.report(step, { progress: { ...progress, children } });
  }
  return awaitChild(rt, id, what);
}
