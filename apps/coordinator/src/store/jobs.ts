// The job table the mover works from (DESIGN.md section 6): a job and all its steps are written
// whole at submission; a mover claims one with a lease it renews, records each step's durable
// progress, and finishes it. A job whose mover's lease expired is taken over by the next mover
// that asks (the same one restarted, or another), so a job never has two owners at once and never
// none for long.
import {
  create,
  JobSchema,
  JobState,
  type FinishJobRequest,
  type Job,
  type ReportStepRequest,
  type SubmitJobRequest,
} from '@tessera/proto';
import type pg from 'pg';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import { transaction } from './db.js';
import { jobStateFromText, jobStateToText, type JobStateText } from './enums.js';
import { checkName } from './names.js';

export const DEFAULT_JOB_LEASE_MS = 15_000;
const MAX_JOB_LEASE_MS = 600_000;

interface JobRow {
  id: string;
  kind: string;
  state: JobStateText;
  spec: string;
  error: string;
  claimed_by: string;
  created_ms: string;
  updated_ms: string;
  lease_ms: string | null;
  phase: string;
  result: string;
  takeovers: number;
  committed: boolean;
  parent_id: string | null;
}
interface StepRow {
  idx: number;
  name: string;
  state: JobStateText;
  progress: string;
}

const JOB_COLUMNS = `id::text, kind, state, spec::text, error, claimed_by,
  (extract(epoch from created_at) * 1000)::int8::text as created_ms,
  (extract(epoch from updated_at) * 1000)::int8::text as updated_ms,
  (extract(epoch from lease_until) * 1000)::int8::text as lease_ms,
  phase, result::text, takeovers, committed, parent_id::text`;

/** States in which a mover holds the job and works on it. */
const LIVE = `('running', 'cancelling')`;

function parseJson(what: string, text: string): string {
  if (text === '') return '{}';
  try {
    JSON.parse(text);
  } catch {
    throw invalidArgument(`the ${what} is not valid JSON`);
  }
  return text;
}

function leaseMs(requested: bigint): number {
  if (requested === 0n) return DEFAULT_JOB_LEASE_MS;
  if (requested < 100n || requested > BigInt(MAX_JOB_LEASE_MS))
    throw invalidArgument(`a job lease must be between 100 and ${MAX_JOB_LEASE_MS} ms`);
  return Number(requested);
}

async function readJobs(client: pg.ClientBase, where: string, params: unknown[]): Promise<Job[]> {
  const jobs = await client.query<JobRow>(
    `select ${JOB_COLUMNS} from tessera.job j where ${where} order by j.id`,
    params,
  );
  if (jobs.rows.length === 0) return [];
  const steps = await client.query<StepRow & { job_id: string }>(
    `select s.job_id::text, s.idx, s.name, s.state, s.progress::text from tessera.job_step s
      where s.job_id = any($1::int8[]) order by s.job_id, s.idx`,
    [jobs.rows.map((j) => j.id)],
  );
  const byJob = new Map<string, StepRow[]>();
  for (const s of steps.rows) {
    const list = byJob.get(s.job_id) ?? [];
    list.push(s);
    byJob.set(s.job_id, list);
  }
  return jobs.rows.map((j) =>
    create(JobSchema, {
      id: BigInt(j.id),
      kind: j.kind,
      state: jobStateFromText(j.state),
      specJson: j.spec,
      error: j.error,
      claimedBy: j.claimed_by,
      createdMs: BigInt(j.created_ms),
      updatedMs: BigInt(j.updated_ms),
      leaseUntilMs: j.lease_ms === null ? 0n : BigInt(j.lease_ms),
      phase: j.phase,
      resultJson: j.result,
      takeovers: j.takeovers,
      committed: j.committed,
      parentId: j.parent_id === null ? 0n : BigInt(j.parent_id),
      steps: (byJob.get(j.id) ?? []).map((s) => ({
        index: s.idx,
        name: s.name,
        state: jobStateFromText(s.state),
        progressJson: s.progress,
      })),
    }),
  );
}

export async function readJob(client: pg.ClientBase, id: bigint | string): Promise<Job> {
  const [job] = await readJobs(client, 'id = $1', [id.toString()]);
  if (!job) throw notFound(`no job with id ${id}`);
  return job;
}

/**
 * Locks the job and checks that `moverId` holds it (running or cancelling, claimed by it). Every
 * change a mover makes on a job's behalf goes through this in the same transaction, so a mover
 * whose job was taken over cannot change anything any more.
 */
export async function lockHeldJob(
  client: pg.ClientBase,
  jobId: bigint,
  moverId: string,
): Promise<{ state: JobStateText; committed: boolean }> {
  const { rows } = await client.query<{
    state: JobStateText;
    claimed_by: string;
    committed: boolean;
  }>('select state, claimed_by, committed from tessera.job where id = $1 for update', [
    jobId.toString(),
  ]);
  const row = rows[0];
  if (!row) throw notFound(`no job with id ${jobId}`);
  if (row.state !== 'running' && row.state !== 'cancelling')
    throw failedPrecondition(`job ${jobId} is ${row.state}, not running; stop working on it`);
  if (row.claimed_by !== moverId)
    throw failedPrecondition(
      `job ${jobId} is held by mover ${row.claimed_by || '(none)'}, not ${moverId}; stop working on it`,
    );
  return { state: row.state, committed: row.committed };
}

export class JobStore {
  constructor(private readonly pool: pg.Pool) {}

  async submit(req: SubmitJobRequest): Promise<Job> {
    const kind = checkName('job kind', req.kind);
    const spec = parseJson('job spec', req.specJson);
    if (req.steps.length === 0) throw invalidArgument('a job needs at least one step');
    req.steps.forEach((s, i) => checkName(`name of step ${i}`, s));
    return transaction(this.pool, async (client) => {
      if (req.parentId !== 0n) await readJob(client, req.parentId);
      const { rows } = await client.query<{ id: string }>(
        `insert into tessera.job (kind, state, spec, parent_id) values ($1, 'pending', $2::jsonb, $3)
         returning id::text`,
        [kind, spec, req.parentId === 0n ? null : req.parentId.toString()],
      );
      const id = rows[0]!.id;
      await client.query(
        `insert into tessera.job_step (job_id, idx, name, state)
         select $1, i - 1, name, 'pending' from unnest($2::text[]) with ordinality as s(name, i)`,
        [id, req.steps],
      );
      return readJob(client, id);
    });
  }

  get(id: bigint): Promise<Job> {
    return transaction(this.pool, (client) => readJob(client, id), {
      isolation: 'repeatable read',
      readOnly: true,
    });
  }

  list(all: boolean, parentId = 0n): Promise<Job[]> {
    const live = all ? 'true' : `state in ('pending', 'running', 'cancelling')`;
    return transaction(
      this.pool,
      (client) =>
        parentId === 0n
          ? readJobs(client, live, [])
          : readJobs(client, `${live} and parent_id = $1`, [parentId.toString()]),
      { isolation: 'repeatable read', readOnly: true },
    );
  }

  /**
   * A job for `moverId`, first found of: one it already holds and is not running now (it
   * restarted), one whose mover's lease expired (a takeover), the oldest pending one. `skip
   * locked` lets several movers claim at once without waiting on each other.
   */
  async claim(
    moverId: string,
    requestedLeaseMs = 0n,
    running: bigint[] = [],
  ): Promise<Job | undefined> {
    const mover = checkName('mover id', moverId);
    const lease = leaseMs(requestedLeaseMs);
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: string; claimed_by: string; state: JobStateText }>(
        `select j.id::text, j.claimed_by, j.state from tessera.job j
          where not (j.id = any($2::int8[]))
            and (j.state = 'pending'
                 or (j.state in ${LIVE}
                     and (j.claimed_by = $1 or j.lease_until is null or j.lease_until < clock_timestamp())))
          order by (j.state in ${LIVE} and j.claimed_by = $1) desc, (j.state = 'pending'), j.id
          limit 1 for update skip locked`,
        [mover, running.map(String)],
      );
      const row = rows[0];
      if (!row) return undefined;
      const takeover = row.state !== 'pending' && row.claimed_by !== mover;
      await client.query(
        `update tessera.job set state = case when state = 'pending' then 'running' else state end,
            claimed_by = $2, lease_until = clock_timestamp() + $3 * interval '1 millisecond',
            takeovers = takeovers + $4, updated_at = clock_timestamp()
          where id = $1`,
        [row.id, mover, lease, takeover ? 1 : 0],
      );
      return readJob(client, row.id);
    });
  }

  /** Extends the lease of a job `moverId` holds; the answer carries its state (CANCELLING). */
  renew(jobId: bigint, moverId: string, requestedLeaseMs = 0n): Promise<Job> {
    const lease = leaseMs(requestedLeaseMs);
    return transaction(this.pool, async (client) => {
      await lockHeldJob(client, jobId, moverId);
      await client.query(
        `update tessera.job set lease_until = clock_timestamp() + $2 * interval '1 millisecond' where id = $1`,
        [jobId.toString(), lease],
      );
      return readJob(client, jobId);
    });
  }

  async reportStep(req: ReportStepRequest): Promise<Job> {
    const state = jobStateToText(req.state);
    if (state === undefined)
      throw invalidArgument(`job state ${req.state} is not a valid step state`);
    const progress =
      req.progressJson === '' ? undefined : parseJson('step progress', req.progressJson);
    const result = req.resultJson === '' ? undefined : parseJson('job result', req.resultJson);
    return transaction(this.pool, async (client) => {
      let jobState: JobStateText;
      if (req.moverId !== '') {
        jobState = (await lockHeldJob(client, req.jobId, req.moverId)).state;
      } else {
        const job = await client.query<{ state: JobStateText }>(
          'select state from tessera.job where id = $1 for update',
          [req.jobId.toString()],
        );
        const found = job.rows[0]?.state;
        if (found === undefined) throw notFound(`no job with id ${req.jobId}`);
        if (found !== 'running') {
          throw failedPrecondition(`job ${req.jobId} is ${found}, not running; stop working on it`);
        }
        jobState = found;
      }
      const step = await client.query(
        `update tessera.job_step set state = $3, progress = coalesce($4::jsonb, progress)
          where job_id = $1 and idx = $2`,
        [req.jobId.toString(), req.stepIndex, state, progress ?? null],
      );
      if (step.rowCount === 0) throw notFound(`job ${req.jobId} has no step ${req.stepIndex}`);
      // A running job reported without a mover id follows its steps: one failed step fails it,
      // all steps done finishes it. A mover that holds the job (mover_id set) finishes it itself
      // (FinishJob), after its cleanup; a cancelling one only records progress.
      const follow = jobState === 'running' && req.moverId === '';
      await client.query(
        `update tessera.job j set updated_at = clock_timestamp(),
            phase = case when $4 = '' then phase else $4 end,
            result = coalesce($5::jsonb, result),
            state = case when not $6 then j.state
                         when $2 = 'failed' then 'failed'
                         when not exists (select 1 from tessera.job_step s where s.job_id = j.id and s.state <> 'done')
                           then 'done'
                         else j.state end,
            error = case when $6 and $2 = 'failed' then $3 else j.error end
          where id = $1`,
        [req.jobId.toString(), state, req.error, req.phase, result ?? null, follow],
      );
      return readJob(client, req.jobId);
    });
  }

  /**
   * A pending job is cancelled at once (nothing was done yet). A running one becomes CANCELLING:
   * its mover (or whoever takes it over) undoes what it did and then finishes it as cancelled.
   * Refused once the job is committed: a move past its flip can only finish.
   */
  cancel(id: bigint): Promise<Job> {
    return transaction(this.pool, async (client) => {
      const job = await client.query<{ state: JobStateText; committed: boolean }>(
        'select state, committed from tessera.job where id = $1 for update',
        [id.toString()],
      );
      const row = job.rows[0];
      if (row === undefined) throw notFound(`no job with id ${id}`);
      switch (row.state) {
        case 'pending':
          await client.query(
            `update tessera.job set state = 'cancelled', updated_at = clock_timestamp() where id = $1`,
            [id.toString()],
          );
          await client.query(
            `update tessera.job_step set state = 'cancelled' where job_id = $1 and state in ('pending', 'running')`,
            [id.toString()],
          );
          break;
        case 'running':
          if (row.committed) {
            throw failedPrecondition(
              `job ${id} is past its point of no return (the ownership flip) and can only finish; it was not cancelled`,
            );
          }
          await client.query(
            `update tessera.job set state = 'cancelling', updated_at = clock_timestamp() where id = $1`,
            [id.toString()],
          );
          break;
        case 'cancelling':
          break;
        case 'done':
        case 'failed':
        case 'cancelled':
        case 'verify_failed':
          throw failedPrecondition(`job ${id} is already ${row.state}`);
        default:
          return assertNever(row.state);
      }
      // Children (a rebalance's moves) are cancelled with their parent.
      const children = await client.query<{ id: string }>(
        `select id::text from tessera.job where parent_id = $1 and state in ('pending', 'running') and not committed`,
        [id.toString()],
      );
      for (const c of children.rows) {
        await client.query(
          `update tessera.job set state = case when state = 'pending' then 'cancelled' else 'cancelling' end,
              updated_at = clock_timestamp() where id = $1`,
          [c.id],
        );
      }
      return readJob(client, id);
    });
  }

  /** The mover ends a job it holds: done, failed, cancelled or verify_failed. */
  finish(req: FinishJobRequest): Promise<Job> {
    const state = finalState(req.state);
    const result = req.resultJson === '' ? undefined : parseJson('job result', req.resultJson);
    return transaction(this.pool, async (client) => {
      const held = await lockHeldJob(client, req.jobId, req.moverId);
      if (state === 'cancelled' && held.state !== 'cancelling' && held.committed) {
        throw failedPrecondition(`job ${req.jobId} is committed and cannot end cancelled`);
      }
      await client.query(
        `update tessera.job set state = $2, error = $3, result = coalesce($4::jsonb, result),
            lease_until = null, updated_at = clock_timestamp()
          where id = $1`,
        [req.jobId.toString(), state, req.error, result ?? null],
      );
      const stepState = state === 'done' ? 'done' : 'cancelled';
      await client.query(
        `update tessera.job_step set state = $2 where job_id = $1 and state in ('pending', 'running')`,
        [req.jobId.toString(), stepState],
      );
      return readJob(client, req.jobId);
    });
  }
}

function finalState(s: JobState): JobStateText {
  switch (s) {
    case JobState.DONE:
      return 'done';
    case JobState.FAILED:
      return 'failed';
    case JobState.CANCELLED:
      return 'cancelled';
    case JobState.VERIFY_FAILED:
      return 'verify_failed';
    case JobState.UNSPECIFIED:
    case JobState.PENDING:
    case JobState.RUNNING:
    case JobState.CANCELLING:
      throw invalidArgument(
        `a job ends DONE, FAILED, CANCELLED or VERIFY_FAILED, not ${JobState[s] ?? s}`,
      );
    default:
      throw invalidArgument(`job state ${String(s)} is not defined`);
  }
}

function assertNever(x: never): never {
  throw new TypeError(`unknown job state ${String(x)}`);
}
