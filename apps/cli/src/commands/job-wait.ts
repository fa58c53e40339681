// Following a job to its end (`tessera jobs watch`, `--wait`): on a terminal one progress line
// redrawn in place; elsewhere one JSON line per change. A parent job (split, merge, rebalance,
// drain) shows the child it waits for. The exit code says how the job ended: 0 done, 1 anything
// else (with the job's error on stderr).
import { JobState, type Job } from '@tessera/proto';
import type { CommandContext } from '../command.js';
import { CliError } from '../errors.js';
import { toJson } from '../format.js';
import {
  isFinished,
  jobStateName,
  jobText,
  jobView,
  progressLine,
  progressOf,
} from './job-view.js';

const POLL_MS = 250;
/** A pending job no mover claims in this long is reported (is tessera-mover running?). */
const UNCLAIMED_MS = 30_000;

async function runningChild(ctx: CommandContext, job: Job): Promise<Job | undefined> {
  if (job.kind === 'move' || job.kind === 'verify' || job.kind === 'node-add') return undefined;
  const { jobs } = await ctx.coordinator().jobs.listJobs({ parentId: job.id });
  return jobs.find((j) => j.state === JobState.RUNNING || j.state === JobState.CANCELLING);
}

/** Waits quietly for `id` to end and resolves with it. */
export async function untilFinished(ctx: CommandContext, id: bigint): Promise<Job> {
  for (;;) {
    const job = await ctx.coordinator().jobs.getJob({ id });
    if (isFinished(job.state)) return job;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Waits for `id` to end, showing progress; resolves with the exit code. */
export async function follow(
  ctx: CommandContext,
  id: bigint,
  opts: { json: boolean; quiet?: boolean },
): Promise<number> {
  const { io } = ctx;
  const c = ctx.coordinator();
  const terminal = io.isTerminal === true && !opts.json;
  const started = Date.now();
  let last = '';
  let prev: { rows: number; atMs: number } | undefined;
  let job: Job;
  for (;;) {
    job = await c.jobs.getJob({ id });
    if (isFinished(job.state)) break;
    if (job.state === JobState.PENDING && Date.now() - started > UNCLAIMED_MS)
      throw new CliError(
        `no mover has claimed job ${id} after ${UNCLAIMED_MS / 1000} s; is tessera-mover running (tessera up runs one)? The job stays queued.`,
      );
    const child = await runningChild(ctx, job);
    const now = Date.now();
    const p = progressOf(child ?? job, prev, now);
    if (p.rows !== null) prev = { rows: p.rows, atMs: now };
    const shown = child ? { ...p, parent: job.id.toString(), parentPhase: job.phase } : p;
    if (!opts.quiet) {
      if (terminal) {
        const line = `${child ? `job ${job.id} ${job.phase}: ` : ''}${progressLine(p)}`;
        io.out(`\r${line.padEnd(last.length)}`);
        last = line;
      } else {
        const line = JSON.stringify(shown);
        if (line !== last) io.out(`${line}\n`);
        last = line;
      }
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  if (terminal && last !== '') io.out('\n');
  if (opts.json) io.out(`${toJson(jobView(job)).replace(/\n\s*/g, ' ').trim()}\n`);
  else if (!opts.quiet) io.out(jobText(job));
  if (job.state === JobState.DONE) return 0;
  io.err(
    `tessera: job ${id} ended ${jobStateName(job.state)}${job.error ? `: ${job.error}` : ''}\n`,
  );
  return 1;
}
