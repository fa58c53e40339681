// Catalog changes a mover makes for a job: a range's owner and state (freeze, flip, release),
// the moves in progress (Catalog.moves), and node states. Each runs as one catalog change whose
// transaction first checks that the mover still holds the job's lease, so a mover whose job was
// taken over cannot change the cluster. Asking for what the catalog already says changes nothing
// and answers with the current epoch, so a mover retrying after a crash is harmless.
import {
  NodeState,
  RangeState,
  type JobNodeChangeRequest,
  type JobRangeChangeRequest,
  type JobRangeMoveRequest,
} from '@tessera/proto';
import type pg from 'pg';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import type { CatalogStore, ChangeTx } from './catalog-store.js';
import { transaction } from './db.js';
import { nodeStateToText, rangeStateToText } from './enums.js';
import { lockHeldJob } from './jobs.js';
import { checkName } from './names.js';
import { readMeta } from './snapshot.js';

export interface Published {
  epoch: bigint;
  /** False when the catalog already said this (no new epoch). */
  changed: boolean;
}

interface RangeRow {
  hi: string;
  owner: string;
  state: string;
}

async function findRange(
  client: pg.ClientBase,
  keyspace: string,
  lo: bigint,
  hi: bigint,
): Promise<RangeRow> {
  const { rows } = await client.query<RangeRow>(
    'select hi::text, owner, state from tessera.range where keyspace = $1 and lo = $2',
    [keyspace, lo.toString()],
  );
  const r = rows[0];
  if (!r) throw notFound(`no range of keyspace ${keyspace} starts at ${lo}`);
  if (BigInt(r.hi) !== hi)
    throw failedPrecondition(
      `range ${keyspace}:${lo} ends at ${r.hi}, not ${hi}; it was split or merged since the job was planned`,
    );
  return r;
}

export class JobChanges {
  constructor(private readonly store: CatalogStore) {}

  /** Runs `fn` as a catalog change unless `unchanged` (checked under the job lock) says no. */
  private async apply(
    jobId: bigint,
    moverId: string,
    unchanged: (client: pg.ClientBase) => Promise<boolean>,
    fn: (tx: ChangeTx) => Promise<void>,
  ): Promise<Published & { catalog?: Awaited<ReturnType<CatalogStore['change']>>['catalog'] }> {
    if (jobId !== 0n) checkName('mover id', moverId);
    const same = await transaction(this.store.pool, async (client) => {
      if (jobId !== 0n) await lockHeldJob(client, jobId, moverId);
      return (await unchanged(client)) ? (await readMeta(client)).epoch : undefined;
    });
    if (same !== undefined) return { epoch: same, changed: false };
    const committed = await this.store.change(async (tx) => {
      if (jobId !== 0n) await lockHeldJob(tx.client, jobId, moverId);
      await fn(tx);
    });
    return { epoch: committed.epoch, changed: true, catalog: committed.catalog };
  }

  changeRange(req: JobRangeChangeRequest) {
    const keyspace = checkName('keyspace name', req.keyspace);
    const owner = checkName('owner node name', req.owner);
    const state = rangeStateToText(req.state);
    if (state === undefined || req.state === RangeState.UNSPECIFIED)
      throw invalidArgument('a range change needs RANGE_STATE_ACTIVE or RANGE_STATE_FROZEN');
    return this.apply(
      req.jobId,
      req.moverId,
      async (client) => {
        const r = await findRange(client, keyspace, req.lo, req.hi);
        if (r.owner !== owner || r.state !== state) return false;
        if (!req.commitJob) return true;
        const j = await client.query<{ committed: boolean }>(
          'select committed from tessera.job where id = $1',
          [req.jobId.toString()],
        );
        return j.rows[0]?.committed === true;
      },
      async (tx) => {
        if (req.commitJob) {
          const j = await tx.client.query<{ state: string }>(
            'select state from tessera.job where id = $1',
            [req.jobId.toString()],
          );
          if (j.rows[0]?.state !== 'running')
            throw failedPrecondition(
              `job ${req.jobId} is being cancelled; it may not pass its point of no return`,
            );
        }
        const r = await findRange(tx.client, keyspace, req.lo, req.hi);
        if (r.owner !== owner) {
          const node = await tx.client.query<{ state: string }>(
            'select state from tessera.node where name = $1',
            [owner],
          );
          const ns = node.rows[0]?.state;
          if (ns === undefined) throw notFound(`no node named ${owner}`);
          if (ns !== 'active')
            throw failedPrecondition(
              `node ${owner} is ${ns}, not active, so it cannot own a range`,
            );
        }
        await tx.client.query(
          'update tessera.range set owner = $3, state = $4 where keyspace = $1 and lo = $2',
          [keyspace, req.lo.toString(), owner, state],
        );
        if (req.commitJob)
          await tx.client.query('update tessera.job set committed = true where id = $1', [
            req.jobId.toString(),
          ]);
        tx.touch(keyspace);
      },
    );
  }

  changeRangeMove(req: JobRangeMoveRequest) {
    const keyspace = checkName('keyspace name', req.keyspace);
    if (req.jobId === 0n) throw invalidArgument('a range move belongs to a job');
    const exists = async (client: pg.ClientBase) => {
      const { rows } = await client.query<{ job_id: string }>(
        'select job_id::text from tessera.range_move where keyspace = $1 and lo = $2',
        [keyspace, req.lo.toString()],
      );
      return rows[0]?.job_id;
    };
    if (req.remove) {
      return this.apply(
        req.jobId,
        req.moverId,
        async (client) => (await exists(client)) !== req.jobId.toString(),
        async (tx) => {
          await tx.client.query(
            'delete from tessera.range_move where keyspace = $1 and lo = $2 and job_id = $3',
            [keyspace, req.lo.toString(), req.jobId.toString()],
          );
        },
      );
    }
    const source = checkName('source node name', req.source);
    const target = checkName('target node name', req.target);
    if (source === target) throw invalidArgument(`a range cannot move from ${source} to itself`);
    return this.apply(
      req.jobId,
      req.moverId,
      async (client) => (await exists(client)) === req.jobId.toString(),
      async (tx) => {
        const r = await findRange(tx.client, keyspace, req.lo, req.hi);
        if (r.owner !== source)
          throw failedPrecondition(
            `range ${keyspace}:${req.lo} is owned by ${r.owner}, not ${source}`,
          );
        // At most one move per keyspace may involve a node: a node's fence of a keyspace is one
        // function, and one job at a time rewrites it.
        const busy = await tx.client.query<{ job_id: string; lo: string }>(
          `select job_id::text, lo::text from tessera.range_move
            where keyspace = $1 and (source in ($2, $3) or target in ($2, $3))`,
          [keyspace, source, target],
        );
        const other = busy.rows[0];
        if (other)
          throw failedPrecondition(
            `job ${other.job_id} is already moving range ${keyspace}:${other.lo} on ${source} or ${target}; one move per keyspace and node at a time`,
          );
        await tx.client.query(
          `insert into tessera.range_move (keyspace, lo, hi, job_id, source, target)
           values ($1, $2, $3, $4, $5, $6)`,
          [keyspace, req.lo.toString(), req.hi.toString(), req.jobId.toString(), source, target],
        );
      },
    );
  }

  changeNode(req: JobNodeChangeRequest) {
    const name = checkName('node name', req.name);
    const state = nodeStateToText(req.state);
    if (state === undefined || req.state === NodeState.UNSPECIFIED)
      throw invalidArgument('a node change needs a node state');
    return this.apply(
      req.jobId,
      req.moverId,
      async (client) => {
        const { rows } = await client.query<{ state: string }>(
          'select state from tessera.node where name = $1',
          [name],
        );
        return rows[0]?.state === state;
      },
      async (tx) => {
        const { rows } = await tx.client.query<{ state: string; role: string }>(
          'select state, role from tessera.node where name = $1',
          [name],
        );
        const node = rows[0];
        if (!node) {
          if (req.host === '' || req.port === 0)
            throw notFound(`no node named ${name} (a new node needs a host and port)`);
          await tx.client.query(
            `insert into tessera.node (name, host, port, role, state) values ($1, $2, $3, 'data', $4)`,
            [name, req.host, req.port, state],
          );
          return;
        }
        if (node.role === 'home' && state !== 'active')
          throw failedPrecondition(`node ${name} is the home node; it stays active`);
        if (state === 'removed') {
          const owned = await tx.client.query<{ n: string }>(
            `select (select count(*) from tessera.range where owner = $1)
                  + (select count(*) from tessera.range_move where source = $1 or target = $1) as n`,
            [name],
          );
          if (owned.rows[0]!.n !== '0')
            throw failedPrecondition(
              `node ${name} still owns ranges (or a move involves it); drain it first (tessera nodes drain ${name})`,
            );
        }
        await tx.client.query('update tessera.node set state = $2 where name = $1', [name, state]);
      },
    );
  }
}
