// Placement changes under load, run by the cluster's mover (apps/mover): a range moved to another
// data node (`move`), a range split with its upper half moved away and then merged back
// (`split-merge`: two cutovers), and the mover SIGKILLed at a phase of a move (`kill-mover`, by
// its own TESSERA_MOVER_FAULT kill point), restarted with the same id so that it resumes the job.
// Each counts the cutovers that completed (a job that ended DONE moved its rows and flipped the
// owner) in its details, for the report.
import { setTimeout as sleep } from 'node:timers/promises';
import { MOVE_PHASES, MOVE_STEPS } from '@tessera/mover';
import { JobState, NodeRole, type Catalog, type Job } from '@tessera/proto';
import type { Cluster } from '../cluster/cluster.js';
import { TABLES } from '../checker/values.js';
import type { FaultContext, FaultItem, FaultKind } from './fault.js';

const KEYSPACES = [TABLES.lists.keyspace, TABLES.counters.keyspace, TABLES.accounts.keyspace];

const FINAL = new Set([JobState.DONE, JobState.FAILED, JobState.CANCELLED, JobState.VERIFY_FAILED]);
/** How long a heal waits for a job the fault submitted to end, beyond the fault's `seconds`. */
const JOB_END_TIMEOUT_MS = 180_000;

/** Which range and node a move fault picks: indexes reduced modulo what the catalog holds then. */
interface Pick {
  keyspace: string;
  rangeSlot: number;
  nodeSlot: number;
}

function drawPick(rng: { pick<T>(x: readonly T[]): T; int(lo: number, hi: number): number }): Pick {
  return { keyspace: rng.pick(KEYSPACES), rangeSlot: rng.int(0, 9999), nodeSlot: rng.int(0, 9999) };
}

interface RangeChoice {
  keyspace: string;
  lo: bigint;
  hi: bigint;
  owner: string;
  /** Another data node than the owner. */
  to: string;
}

/** The range and destination a pick names in this catalog (pure). */
export function resolvePick(catalog: Catalog, p: Pick): RangeChoice {
  const ranges = catalog.ranges
    .filter((r) => r.keyspace === p.keyspace)
    .sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  if (ranges.length === 0) throw new Error(`keyspace ${p.keyspace} has no ranges`);
  const r = ranges[p.rangeSlot % ranges.length]!;
  const home = catalog.nodes.find((n) => n.role === NodeRole.HOME)?.name;
  const others = catalog.nodes
    .map((n) => n.name)
    .filter((n) => n !== r.owner && n !== home)
    .sort();
  if (others.length === 0) throw new Error('a move needs a second data node');
  return {
    keyspace: p.keyspace,
    lo: r.lo,
    hi: r.hi,
    owner: r.owner,
    to: others[p.nodeSlot % others.length]!,
  };
}

function pickOf(item: FaultItem): Pick {
  return {
    keyspace: String(item.params.keyspace),
    rangeSlot: Number(item.params.rangeSlot),
    nodeSlot: Number(item.params.nodeSlot),
  };
}

async function retried<T>(what: string, f: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      if (Date.now() >= until) throw new Error(`${what}: ${(e as Error).message}`);
      await sleep(500);
    }
  }
}

async function submit(
  cluster: Cluster,
  kind: string,
  spec: Record<string, unknown>,
  steps: readonly string[],
): Promise<Job> {
  // A submission retried after a lost answer may queue the job twice; the mover refuses the
  // second (its plan finds the range moved), which the heal reports but never waits on.
  return retried(`SubmitJob ${kind}`, () =>
    cluster.jobs.submitJob({ kind, specJson: JSON.stringify(spec), steps: [...steps] }),
  );
}

/** Polls a job until it ends or `timeoutMs` passes; the last state seen. */
async function waitForJob(cluster: Cluster, id: bigint, timeoutMs: number): Promise<Job> {
  const until = Date.now() + timeoutMs;
  let last: Job | undefined;
  for (;;) {
    try {
      last = await cluster.jobs.getJob({ id });
      if (FINAL.has(last.state) || Date.now() >= until) return last;
    } catch (e) {
      if (Date.now() >= until) {
        if (last) return last;
        throw e;
      }
    }
    await sleep(500);
  }
}

function jobDetails(j: Job): Record<string, unknown> {
  return {
    job: j.id.toString(),
    jobKind: j.kind,
    state: JobState[j.state] ?? String(j.state),
    ...(j.error ? { jobError: j.error } : {}),
  };
}

/** Waits for the fault's jobs to end (heal) and counts the cutovers that completed. */
async function finishJobs(ctx: FaultContext, item: FaultItem): Promise<Record<string, unknown>> {
  const ids = ((item.params.jobs as string[] | undefined) ?? []).map((x) => BigInt(x));
  const jobs: Record<string, unknown>[] = [];
  let cutovers = 0;
  for (const id of ids) {
    const j = await waitForJob(ctx.cluster, id, JOB_END_TIMEOUT_MS);
    jobs.push(jobDetails(j));
    if (j.state === JobState.DONE) cutovers += Number(item.params[`cutovers:${id}`] ?? 1);
    else if (!FINAL.has(j.state))
      throw new Error(
        `job ${id} (${j.kind}) had not ended ${JOB_END_TIMEOUT_MS / 1000} s after its fault`,
      );
  }
  return { jobs, cutovers };
}

function remember(item: FaultItem, job: Job, cutovers: number): void {
  const jobs = (item.params.jobs as string[] | undefined) ?? [];
  jobs.push(job.id.toString());
  item.params.jobs = jobs;
  item.params[`cutovers:${job.id}`] = cutovers;
}

const allDataNodes = (shape: { nodes: { name: string; role: string }[] }) => ({
  nodes: shape.nodes.filter((n) => n.role === 'data').map((n) => n.name),
});

/** Queues the move of `r` to `r.to` for the fault (one cutover when it ends DONE). */
async function submitMove(ctx: FaultContext, item: FaultItem, r: RangeChoice): Promise<Job> {
  const job = await submit(
    ctx.cluster,
    'move',
    { keyspace: r.keyspace, lo: r.lo.toString(), to: r.to },
    MOVE_STEPS,
  );
  remember(item, job, 1);
  return job;
}

/** The range and destination the fault's pick names in the catalog as it is now. */
async function resolveNow(ctx: FaultContext, item: FaultItem): Promise<RangeChoice> {
  const catalog = await retried('GetCatalog', () => ctx.cluster.getCatalog());
  return resolvePick(catalog, pickOf(item));
}

/** A fault kind that submits jobs to the mover and heals by waiting for them to end. */
function jobFault(name: string, summary: string, inject: FaultKind['inject']): FaultKind {
  return {
    name,
    summary,
    draw: (rng) => ({ target: 'mover', params: { ...drawPick(rng) } }),
    selfTimed: true,
    affects: (_item, shape) => allDataNodes(shape),
    inject,
    heal: finishJobs,
  };
}

export const moveRange = jobFault(
  'move',
  'move a range to another data node; waits up to `seconds` for the job, then heals by waiting for it to end',
  async (ctx, item) => {
    const r = await resolveNow(ctx, item);
    const job = await submitMove(ctx, item, r);
    const j = await waitForJob(ctx.cluster, job.id, item.seconds * 1000);
    return { range: `${r.keyspace} [${r.lo}, ${r.hi}]`, from: r.owner, to: r.to, ...jobDetails(j) };
  },
);

export const splitMerge = jobFault(
  'split-merge',
  'split a range, move its upper half to another data node, then merge it back (two cutovers)',
  async (ctx, item) => {
    const r = await resolveNow(ctx, item);
    if (r.hi - r.lo < 2n) throw new Error(`range [${r.lo}, ${r.hi}] is too small to split`);
    const at = r.lo + (r.hi - r.lo) / 2n + 1n;
    const split = await submit(
      ctx.cluster,
      'split',
      { keyspace: r.keyspace, lo: r.lo.toString(), at: at.toString(), moveTo: r.to },
      ['split', 'move'],
    );
    remember(item, split, 1);
    const budgetMs = item.seconds * 1000;
    const t0 = Date.now();
    const s = await waitForJob(ctx.cluster, split.id, budgetMs);
    const details: Record<string, unknown> = {
      range: `${r.keyspace} [${r.lo}, ${r.hi}]`,
      at: at.toString(),
      from: r.owner,
      to: r.to,
      split: jobDetails(s),
    };
    if (s.state !== JobState.DONE) return details; // the heal waits for it; no merge then
    const merge = await submit(
      ctx.cluster,
      'merge',
      { keyspace: r.keyspace, lo: r.lo.toString(), lo2: at.toString() },
      ['move', 'merge'],
    );
    remember(item, merge, 1);
    const m = await waitForJob(ctx.cluster, merge.id, Math.max(1000, budgetMs - (Date.now() - t0)));
    return { ...details, merge: jobDetails(m) };
  },
);

export const killMover: FaultKind = {
  name: 'kill-mover',
  summary:
    'restart the mover armed to SIGKILL itself at a phase of a move (TESSERA_MOVER_FAULT), move a range, restart it after `seconds`; the job resumes',
  draw: (rng) => ({
    target: 'mover0',
    params: { ...drawPick(rng), phase: rng.pick(MOVE_PHASES) },
  }),
  selfTimed: true,
  affects: (_item, shape) => allDataNodes(shape),
  async inject(ctx, item) {
    const mv = ctx.cluster.mover(item.target);
    const r = await resolveNow(ctx, item);
    await mv.process.stop(5_000);
    mv.process.nextEnv = { TESSERA_MOVER_FAULT: String(item.params.phase) };
    mv.process.start();
    mv.process.expectExit();
    await ctx.cluster.restartService(mv); // running already: waits for it to claim jobs
    await submitMove(ctx, item, r);
    const fired = await Promise.race([
      mv.process.exited.then(() => true),
      sleep(Math.max(1, item.seconds) * 1000).then(() => false),
    ]);
    return {
      range: `${r.keyspace} [${r.lo}, ${r.hi}]`,
      from: r.owner,
      to: r.to,
      phase: item.params.phase,
      fired,
    };
  },
  async heal(ctx, item) {
    const mv = ctx.cluster.mover(item.target);
    const stillArmed = mv.process.running;
    if (stillArmed) await mv.process.stop(5_000);
    await ctx.cluster.restartService(mv);
    return { fired: !stillArmed, ...(await finishJobs(ctx, item)) };
  },
};
