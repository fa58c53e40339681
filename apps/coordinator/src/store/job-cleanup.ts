// Cleanup records (Citus's pg_dist_cleanup, research/moves.md 1.5): a mover writes one here
// before it creates anything on a node (publication, subscription, slot, marker row, a widened
// fence, rows copied to a target), under a name that is deterministic per job. Whoever finishes
// or cancels the job, after a crash or not, walks the records and removes what they name; the
// removal is idempotent, since the object may never have been created.
import { create, CleanupRecordSchema, type CleanupRecord } from '@tessera/proto';
import type pg from 'pg';
import { invalidArgument, notFound } from '../errors.js';
import { transaction } from './db.js';
import { lockHeldJob } from './jobs.js';
import { checkName } from './names.js';

const KINDS = new Set(['publication', 'subscription', 'slot', 'marker', 'fence', 'rows', 'table']);
const POLICIES = new Set(['always', 'on_failure', 'on_success']);

interface CleanupRow {
  job_id: string;
  node: string;
  database: string;
  kind: string;
  name: string;
  policy: string;
  detail: string;
  done: boolean;
  created_ms: string;
}

const COLUMNS = `job_id::text, node, database, kind, name, policy, detail::text, done,
  (extract(epoch from created_at) * 1000)::int8::text as created_ms`;

function fromRow(r: CleanupRow): CleanupRecord {
  return create(CleanupRecordSchema, {
    jobId: BigInt(r.job_id),
    node: r.node,
    database: r.database,
    kind: r.kind,
    name: r.name,
    policy: r.policy,
    detailJson: r.detail,
    done: r.done,
    createdMs: BigInt(r.created_ms),
  });
}

export class CleanupStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Writes the record (again: a retry that recreates the object makes it not done). */
  record(moverId: string, rec: CleanupRecord): Promise<CleanupRecord> {
    if (!KINDS.has(rec.kind))
      throw invalidArgument(`cleanup kind "${rec.kind}" is not one of ${[...KINDS].join(', ')}`);
    if (!POLICIES.has(rec.policy))
      throw invalidArgument(
        `cleanup policy "${rec.policy}" is not one of ${[...POLICIES].join(', ')}`,
      );
    checkName('node name', rec.node);
    checkName('cleanup name', rec.name);
    let detail = '{}';
    if (rec.detailJson !== '') {
      try {
        JSON.parse(rec.detailJson);
      } catch {
        throw invalidArgument('the cleanup detail is not valid JSON');
      }
      detail = rec.detailJson;
    }
    return transaction(this.pool, async (client) => {
      await lockHeldJob(client, rec.jobId, moverId);
      const { rows } = await client.query<CleanupRow>(
        `insert into tessera.job_cleanup (job_id, node, database, kind, name, policy, detail)
         values ($1, $2, $3, $4, $5, $6, $7::jsonb)
         on conflict (job_id, node, database, kind, name)
           do update set done = false, policy = excluded.policy, detail = excluded.detail
         returning ${COLUMNS}`,
        [rec.jobId.toString(), rec.node, rec.database, rec.kind, rec.name, rec.policy, detail],
      );
      return fromRow(rows[0]!);
    });
  }

  /** In the order they were written (undo walks them backwards). */
  list(jobId: bigint): Promise<CleanupRecord[]> {
    return transaction(
      this.pool,
      async (client) => {
        const { rows } = await client.query<CleanupRow>(
          `select ${COLUMNS} from tessera.job_cleanup where job_id = $1 order by seq`,
          [jobId.toString()],
        );
        return rows.map(fromRow);
      },
      { readOnly: true },
    );
  }

  markDone(
    moverId: string,
    key: { jobId: bigint; node: string; database: string; kind: string; name: string },
  ): Promise<CleanupRecord> {
    return transaction(this.pool, async (client) => {
      await lockHeldJob(client, key.jobId, moverId);
      const { rows } = await client.query<CleanupRow>(
        `update tessera.job_cleanup set done = true
          where job_id = $1 and node = $2 and database = $3 and kind = $4 and name = $5
          returning ${COLUMNS}`,
        [key.jobId.toString(), key.node, key.database, key.kind, key.name],
      );
      const row = rows[0];
      if (!row)
        throw notFound(
          `job ${key.jobId} has no cleanup record ${key.kind} ${key.name} on ${key.node}/${key.database}`,
        );
      return fromRow(row);
    });
  }
}
