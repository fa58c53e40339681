// The job table the mover works from (DESIGN.md section 6): a job and all its steps are written
// whole at submission; movers claim the oldest pending one and record each step's durable
// progress, so a restarted mover resumes exactly where it stopped.
import {
  create,
  JobSchema,
  type Job,
  type ReportStepRequest,
  type SubmitJobRequest,
} from '@tessera/proto';
import type pg from 'pg';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import { transaction } from './db.js';
import { jobStateFromText, jobStateToText, type JobStateText } from './enums.js';
import { checkName } from './names.js';

interface JobRow {
  id: string;
  kind: string;
  state: JobStateText;
  spec: string;
  error: string;
  claimed_by: string;
  created_ms: string;
  updated_ms: string;
}
interface StepRow {
  idx: number;
  name: string;
  state: JobStateText;
  progress: string;
}

const JOB_COLUMNS = `id::text, kind, state, spec::text, error, claimed_by,
  (extract(epoch from created_at) * 1000)::int8::text as created_ms,
  (extract(epoch from updated_at) * 1000)::int8::text as updated_ms`;

function parseJson(what: string, text: string): string {
  if (text === '') return '{}';
  try {
    JSON.parse(text);
  } catch {
    throw invalidArgument(`the ${what} is not valid JSON`);
  }
  return text;
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
      steps: (byJob.get(j.id) ?? []).map((s) => ({
        index: s.idx,
        name: s.name,
        state: jobStateFromText(s.state),
        progressJson: s.progress,
      })),
    }),
  );
}

async function readJob(client: pg.ClientBase, id: bigint | string): Promise<Job> {
  const [job] = await readJobs(client, 'id = $1', [id.toString()]);
  if (!job) throw notFound(`no job with id ${id}`);
  return job;
}

export class JobStore {
  constructor(private readonly pool: pg.Pool) {}

  async submit(req: SubmitJobRequest): Promise<Job> {
    const kind = checkName('job kind', req.kind);
    const spec = parseJson('job spec', req.specJson);
    if (req.steps.length === 0) throw invalidArgument('a job needs at least one step');
    req.steps.forEach((s, i) => checkName(`name of step ${i}`, s));
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: string }>(
        `insert into tessera.job (kind, state, spec) values ($1, 'pending', $2::jsonb) returning id::text`,
        [kind, spec],
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

  list(all: boolean): Promise<Job[]> {
    return transaction(
      this.pool,
      (client) => readJobs(client, all ? 'true' : `state in ('pending', 'running')`, []),
      { isolation: 'repeatable read', readOnly: true },
    );
  }

  /**
   * A job for `moverId`: the one it was already running (it restarted), else the oldest pending
   * one. `skip locked` lets several movers claim at once without waiting on each other.
   */
  async claim(moverId: string): Promise<Job | undefined> {
    const mover = checkName('mover id', moverId);
    return transaction(this.pool, async (client) => {
      const mine = await client.query<{ id: string }>(
        `select j.id::text from tessera.job j where j.state = 'running' and j.claimed_by = $1
          order by j.id limit 1 for update skip locked`,
        [mover],
      );
      let id = mine.rows[0]?.id;
      if (id === undefined) {
        const next = await client.query<{ id: string }>(
          `select j.id::text from tessera.job j where j.state = 'pending' order by j.id limit 1 for update skip locked`,
        );
        id = next.rows[0]?.id;
        if (id === undefined) return undefined;
        await client.query(
          `update tessera.job set state = 'running', claimed_by = $2, updated_at = clock_timestamp() where id = $1`,
          [id, mover],
        );
      }
      return readJob(client, id);
    });
  }

  async reportStep(req: ReportStepRequest): Promise<Job> {
    const state = jobStateToText(req.state);
    if (state === undefined)
      throw invalidArgument(`job state ${req.state} is not a valid step state`);
    const progress =
      req.progressJson === '' ? undefined : parseJson('step progress', req.progressJson);
    return transaction(this.pool, async (client) => {
      const job = await client.query<{ state: JobStateText }>(
        'select state from tessera.job where id = $1 for update',
        [req.jobId.toString()],
      );
      const jobState = job.rows[0]?.state;
      if (jobState === undefined) throw notFound(`no job with id ${req.jobId}`);
      if (jobState !== 'running') {
        throw failedPrecondition(
          `job ${req.jobId} is ${jobState}, not running; stop working on it`,
        );
      }
      const step = await client.query(
        `update tessera.job_step set state = $3, progress = coalesce($4::jsonb, progress)
          where job_id = $1 and idx = $2`,
        [req.jobId.toString(), req.stepIndex, state, progress ?? null],
      );
      if (step.rowCount === 0) throw notFound(`job ${req.jobId} has no step ${req.stepIndex}`);
      // The job follows its steps: one failed step fails it, all steps done finishes it.
      await client.query(
        `update tessera.job j set updated_at = clock_timestamp(),
            state = case when $2 = 'failed' then 'failed'
                         when not exists (select 1 from tessera.job_step s where s.job_id = j.id and s.state <> 'done')
                           then 'done'
                         else j.state end,
            error = case when $2 = 'failed' then $3 else j.error end
          where id = $1`,
        [req.jobId.toString(), state, req.error],
      );
      return readJob(client, req.jobId);
    });
  }

  /** Pending or running jobs only; the mover sees the cancellation at its next ReportStep. */
  cancel(id: bigint): Promise<Job> {
    return transaction(this.pool, async (client) => {
      const job = await client.query<{ state: JobStateText }>(
        'select state from tessera.job where id = $1 for update',
        [id.toString()],
      );
      const state = job.rows[0]?.state;
      if (state === undefined) throw notFound(`no job with id ${id}`);
      if (state !== 'pending' && state !== 'running')
        throw failedPrecondition(`job ${id} is already ${state}`);
      await client.query(
        `update tessera.job set state = 'cancelled', updated_at = clock_timestamp() where id = $1`,
        [id.toString()],
      );
      await client.query(
        `update tessera.job_step set state = 'cancelled' where job_id = $1 and state in ('pending', 'running')`,
        [id.toString()],
      );
      return readJob(client, id);
    });
  }
}
