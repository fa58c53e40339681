// Catalog changes to one keyspace's ranges: split, merge, owner and state. Each names a range by
// its keyspace and lo bound; the store validates the keyspace's whole range list before commit.
import { midpoint, HASH_MAX } from '@tessera/keyspace';
import type {
  MergeRangesRequest,
  SetRangeOwnerRequest,
  SetRangeStateRequest,
  SplitRangeRequest,
} from '@tessera/proto';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import type { ChangeTx } from './catalog-store.js';
import { rangeStateToText, type RangeStateText } from './enums.js';
import { checkName } from './names.js';
import type { RangeRow } from './snapshot.js';

interface FoundRange {
  lo: bigint;
  hi: bigint;
  owner: string;
  state: RangeStateText;
}

async function findRange(
  { client }: ChangeTx,
  keyspaceName: string,
  lo: bigint,
): Promise<FoundRange> {
  const keyspace = checkName('keyspace name', keyspaceName);
  const { rows } = await client.query<RangeRow>(
    `select keyspace, lo::text, hi::text, owner, state from tessera.range where keyspace = $1 and lo = $2`,
    [keyspace, lo.toString()],
  );
  const row = rows[0];
  if (row) return { lo: BigInt(row.lo), hi: BigInt(row.hi), owner: row.owner, state: row.state };
  const ks = await client.query('select 1 from tessera.keyspace where name = $1', [keyspace]);
  if (ks.rowCount === 0) throw notFound(`no keyspace named ${keyspace}`);
  throw notFound(`no range of keyspace ${keyspace} starts at ${lo}`);
}

/** A range a mover job is moving keeps its bounds until the job ends. */
async function refuseIfMoving(tx: ChangeTx, keyspace: string, lo: bigint, hi: bigint) {
  const { rows } = await tx.client.query<{ job_id: string; lo: string }>(
    `select job_id::text, lo::text from tessera.range_move where keyspace = $1 and lo <= $3 and hi >= $2`,
    [keyspace, lo.toString(), hi.toString()],
  );
  const m = rows[0];
  if (m)
    throw failedPrecondition(
      `range ${keyspace}:${m.lo} is being moved by job ${m.job_id}; wait for it or cancel it (tessera jobs cancel ${m.job_id})`,
    );
}

function describe(keyspace: string, r: { lo: bigint; hi: bigint }): string {
  return `range [${r.lo}, ${r.hi}] of keyspace ${keyspace}`;
}

export async function splitRange(tx: ChangeTx, req: SplitRangeRequest): Promise<void> {
  const r = await findRange(tx, req.keyspace, req.lo);
  if (r.state === 'frozen')
    throw failedPrecondition(`${describe(req.keyspace, r)} is frozen for a cutover`);
  if (r.lo === r.hi)
    throw failedPrecondition(
      `${describe(req.keyspace, r)} holds a single hash value and cannot be split`,
    );
  await refuseIfMoving(tx, req.keyspace, r.lo, r.hi);
  const at = req.at ?? midpoint(r.lo, r.hi);
  if (!(r.lo < at && at <= r.hi)) {
    throw invalidArgument(
      `split point ${at} is outside ${describe(req.keyspace, r)}; it must satisfy lo < at <= hi`,
    );
  }
  await tx.client.query('update tessera.range set hi = $3 where keyspace = $1 and lo = $2', [
    req.keyspace,
    r.lo.toString(),
    (at - 1n).toString(),
  ]);
  await tx.client.query(
    `insert into tessera.range (keyspace, lo, hi, owner, state) values ($1, $2, $3, $4, $5)`,
    [req.keyspace, at.toString(), r.hi.toString(), r.owner, r.state],
  );
  tx.touch(req.keyspace);
}

export async function mergeRanges(tx: ChangeTx, req: MergeRangesRequest): Promise<void> {
  const lower = await findRange(tx, req.keyspace, req.lo);
  if (lower.hi === HASH_MAX) {
    throw failedPrecondition(
      `${describe(req.keyspace, lower)} is the last range; there is no adjacent range above it to merge with`,
    );
  }
  const { rows } = await tx.client.query<RangeRow>(
    `select keyspace, lo::text, hi::text, owner, state from tessera.range where keyspace = $1 and lo = $2`,
    [req.keyspace, (lower.hi + 1n).toString()],
  );
  const upperRow = rows[0];
  if (!upperRow) {
    throw failedPrecondition(
      `no range of keyspace ${req.keyspace} starts right after ${lower.hi}, so nothing is adjacent to merge with`,
    );
  }
  const upper = { lo: BigInt(upperRow.lo), hi: BigInt(upperRow.hi) };
  if (upperRow.owner !== lower.owner) {
    throw failedPrecondition(
      `${describe(req.keyspace, lower)} (owner ${lower.owner}) and ${describe(req.keyspace, upper)} (owner ${upperRow.owner}) have different owners; move one first`,
    );
  }
  if (lower.state === 'frozen' || upperRow.state === 'frozen') {
    throw failedPrecondition(
      `a range to merge in keyspace ${req.keyspace} is frozen for a cutover`,
    );
  }
  await refuseIfMoving(tx, req.keyspace, lower.lo, BigInt(upperRow.hi));
  await tx.client.query('delete from tessera.range where keyspace = $1 and lo = $2', [
    req.keyspace,
    upperRow.lo,
  ]);
  await tx.client.query('update tessera.range set hi = $3 where keyspace = $1 and lo = $2', [
    req.keyspace,
    lower.lo.toString(),
    upperRow.hi,
  ]);
  tx.touch(req.keyspace);
}

export async function setRangeOwner(tx: ChangeTx, req: SetRangeOwnerRequest): Promise<void> {
  const r = await findRange(tx, req.keyspace, req.lo);
  const owner = checkName('owner node name', req.owner);
  const node = await tx.client.query<{ state: string }>(
    'select state from tessera.node where name = $1',
    [owner],
  );
  const state = node.rows[0]?.state;
  if (state === undefined) throw notFound(`no node named ${owner}`);
  if (state !== 'active')
    throw failedPrecondition(`node ${owner} is ${state}, not active, so it cannot own a range`);
  await tx.client.query('update tessera.range set owner = $3 where keyspace = $1 and lo = $2', [
    req.keyspace,
    r.lo.toString(),
    owner,
  ]);
  tx.touch(req.keyspace);
}

export async function setRangeState(tx: ChangeTx, req: SetRangeStateRequest): Promise<void> {
  const r = await findRange(tx, req.keyspace, req.lo);
  const state = rangeStateToText(req.state);
  if (state === undefined) {
    throw invalidArgument(
      `range state ${req.state} is not one of RANGE_STATE_ACTIVE, RANGE_STATE_FROZEN`,
    );
  }
  await tx.client.query('update tessera.range set state = $3 where keyspace = $1 and lo = $2', [
    req.keyspace,
    r.lo.toString(),
    state,
  ]);
  tx.touch(req.keyspace);
}
