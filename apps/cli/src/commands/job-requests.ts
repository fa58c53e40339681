// The jobs the CLI submits for the mover: kind, spec and step names, exactly as the mover's job
// kinds (apps/mover/src/move/spec.ts, kinds/*.ts) define them; a job whose steps differ is one
// the mover cannot run. Plus the confirmation a changing command asks for.
import type { SubmitJobRequest } from '@tessera/proto';
import { boolFlag } from '../args.js';
import type { CommandContext } from '../command.js';
import { CliError, UsageError } from '../errors.js';

export const MOVE_STEPS = [
  'plan',
  'prepare',
  'copy',
  'sync',
  'cutover',
  'verify',
  'teardown',
  'delete',
];

type Request = Pick<SubmitJobRequest, 'kind' | 'specJson' | 'steps'>;

const req = (kind: string, spec: object, steps: string[]): Request => ({
  kind,
  specJson: JSON.stringify(spec),
  steps,
});

export const moveJob = (keyspace: string, lo: bigint, to: string, planOnly: boolean): Request =>
  req('move', { keyspace, lo: lo.toString(), to, ...(planOnly ? { planOnly } : {}) }, MOVE_STEPS);

export const splitJob = (
  keyspace: string,
  lo: bigint,
  at: bigint | undefined,
  moveTo: string,
): Request =>
  req(
    'split',
    { keyspace, lo: lo.toString(), ...(at === undefined ? {} : { at: at.toString() }), moveTo },
    ['split', 'move'],
  );

export const mergeJob = (keyspace: string, lo: bigint, lo2: bigint): Request =>
  req('merge', { keyspace, lo: lo.toString(), lo2: lo2.toString() }, ['move', 'merge']);

export const verifyJob = (keyspace: string, lo: bigint | undefined): Request =>
  req('verify', { keyspace, ...(lo === undefined ? {} : { lo: lo.toString() }) }, ['verify']);

export const rebalanceJob = (
  planOnly: boolean,
  tolerance: number,
  keyspaces: string[] | undefined,
): Request =>
  req('rebalance', { planOnly, tolerance, ...(keyspaces ? { keyspaces } : {}) }, ['plan', 'run']);

export const drainJob = (node: string): Request => req('drain', { node }, ['mark', 'plan', 'run']);

export const nodeAddJob = (name: string, host: string, port: number): Request =>
  req('node-add', { name, host, port }, ['check', 'roles', 'schema', 'reference', 'activate']);

export const YES_FLAG = {
  type: 'boolean',
  short: 'y',
  description: 'do not ask for confirmation',
} as const;
export const WAIT_FLAG = {
  type: 'boolean',
  description:
    'wait for the job to end (a progress bar on a terminal, JSON lines otherwise); exit 1 if it fails',
} as const;

/**
 * A changing command goes on only with --yes, or when a person at a terminal says yes; anywhere
 * else it is refused (a script must say --yes).
 */
export async function confirm(ctx: CommandContext, question: string): Promise<void> {
  if (boolFlag(ctx.args, 'yes')) return;
  if (!ctx.io.isTerminal || !ctx.io.ask)
    throw new UsageError(
      `${question.replace(/\?$/, '')}: pass --yes to confirm (not on a terminal)`,
    );
  const answer = await ctx.io.ask(`${question} [y/N] `);
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('not confirmed; nothing was changed');
}
