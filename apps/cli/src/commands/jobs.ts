// `tessera jobs list|show|watch|cancel`: the mover's jobs (moves, splits, merges, rebalances,
// drains, node additions, verifications), their steps and progress.
import type { Command } from '../command.js';
import { boolFlag } from '../args.js';
import { UsageError } from '../errors.js';
import { JSON_FLAG } from '../flags.js';
import { toJson } from '../format.js';
import { YES_FLAG, confirm } from './job-requests.js';
import { follow, untilFinished } from './job-wait.js';
import { jobText, jobView, jobsTable } from './job-view.js';

export function parseJobId(text: string | undefined): bigint {
  if (text === undefined || !/^\d{1,18}$/.test(text) || BigInt(text) === 0n)
    throw new UsageError(
      `"${text ?? ''}" is not a job id (a positive whole number, as tessera jobs list prints)`,
    );
  return BigInt(text);
}

export const jobsCommands: Command[] = [
  {
    path: ['jobs', 'list'],
    summary: 'list the jobs that are queued or running (--all: finished ones too)',
    usage: ['jobs list [--all] [--json]'],
    examples: ['tessera jobs list', 'tessera jobs list --all --json'],
    flags: { all: { type: 'boolean', description: 'include finished jobs' }, json: JSON_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const { jobs } = await coordinator().jobs.listJobs({ all: boolFlag(args, 'all') });
      io.out(boolFlag(args, 'json') ? toJson({ jobs: jobs.map(jobView) }) : jobsTable(jobs));
      return 0;
    },
  },
  {
    path: ['jobs', 'show'],
    summary: 'show one job: its state, phase, steps with their progress, error and result',
    usage: ['jobs show ID [--json]'],
    examples: ['tessera jobs show 7', 'tessera jobs show 7 --json'],
    flags: { json: JSON_FLAG },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const job = await coordinator().jobs.getJob({ id: parseJobId(args.positionals[0]) });
      io.out(boolFlag(args, 'json') ? toJson(jobView(job)) : jobText(job));
      return 0;
    },
  },
  {
    path: ['jobs', 'watch'],
    summary: 'follow a job to its end: a progress bar on a terminal, JSON lines otherwise',
    usage: ['jobs watch ID [--json]'],
    description:
      'Shows the phase, rows copied of the total, replication lag, copy rate and ETA until the job\n' +
      "ends. Exits 0 when it ends done and 1 otherwise, with the job's error.",
    examples: ['tessera jobs watch 7', 'tessera jobs watch 7 --json | tail -1'],
    flags: { json: JSON_FLAG },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    run: (ctx) =>
      follow(ctx, parseJobId(ctx.args.positionals[0]), { json: boolFlag(ctx.args, 'json') }),
  },
  {
    path: ['jobs', 'cancel'],
    summary: 'cancel a job: its mover undoes what it did (refused once a move flipped ownership)',
    usage: ['jobs cancel ID [--yes] [--wait]'],
    description:
      'A queued job is cancelled at once. A running one becomes cancelling: its mover (or, if that\n' +
      'mover died, the next one once its lease lapses) removes everything the job created and puts\n' +
      'fences and the catalog back as they were, then marks it cancelled. A move past its flip\n' +
      "cannot be cancelled; it finishes. Children of the job (a rebalance's moves) are cancelled too.",
    examples: ['tessera jobs cancel 7 --yes', 'tessera jobs cancel 7 --yes --wait'],
    flags: {
      yes: YES_FLAG,
      wait: { type: 'boolean', description: 'wait until the cancel is done' },
      json: JSON_FLAG,
    },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run(ctx) {
      const id = parseJobId(ctx.args.positionals[0]);
      await confirm(ctx, `Cancel job ${id} and undo what it did?`);
      const job = await ctx.coordinator().jobs.cancelJob({ id });
      if (boolFlag(ctx.args, 'wait')) {
        const ended = await untilFinished(ctx, id);
        const state = jobView(ended).state;
        ctx.io.out(boolFlag(ctx.args, 'json') ? toJson(jobView(ended)) : `job ${id} is ${state}\n`);
        if (state === 'cancelled') return 0;
        ctx.io.err(`tessera: job ${id} ended ${state}${ended.error ? `: ${ended.error}` : ''}\n`);
        return 1;
      }
      ctx.io.out(
        boolFlag(ctx.args, 'json') ? toJson(jobView(job)) : `job ${id} is ${jobView(job).state}\n`,
      );
      return 0;
    },
  },
];
