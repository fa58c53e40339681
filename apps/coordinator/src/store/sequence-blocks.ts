// Cluster-wide sequences (docs/architecture.md, "Sequences"): routers reserve blocks of values
// here and hand them out themselves. A reservation moves the sequence's `next` past the block in
// one transaction committed with synchronous_commit on, before the answer leaves: a value given
// to a router is never given again, even if the catalog database crashes right after.
import type pg from 'pg';
import { failedPrecondition, invalidArgument } from '../errors.js';
import { transaction } from './db.js';

export interface SequenceParams {
  readonly start: bigint;
  readonly increment: bigint;
  readonly minValue: bigint;
  readonly maxValue: bigint;
  /** The first value to give when the sequence is new here (what the nodes already used). */
  readonly floor: bigint;
}

export interface SequenceBlock {
  readonly first: bigint;
  /** 0 once the sequence reached its bound. */
  readonly count: bigint;
}

/** Largest block one call may reserve. */
export const MAX_SEQUENCE_BLOCK = 1_000_000n;

/**
 * The block starting at `next`: at most `count` values, none past the bound. Pure, exported for
 * tests.
 */
export function blockAt(next: bigint, count: bigint, p: SequenceParams): SequenceBlock {
  const inc = p.increment;
  const room =
    inc > 0n
      ? next > p.maxValue
        ? 0n
        : (p.maxValue - next) / inc + 1n
      : next < p.minValue
        ? 0n
        : (next - p.minValue) / -inc + 1n;
  const n = room < count ? room : count;
  return { first: next, count: n };
}

export class SequenceBlocks {
  constructor(private readonly pool: pg.Pool) {}

  async allocate(sequence: string, count: bigint, p: SequenceParams): Promise<SequenceBlock> {
    if (sequence === '') throw invalidArgument('a sequence allocation needs the sequence name');
    if (count < 1n || count > MAX_SEQUENCE_BLOCK)
      throw invalidArgument(
        `a sequence block holds 1 to ${MAX_SEQUENCE_BLOCK} values, not ${count}`,
      );
    if (p.increment === 0n) throw invalidArgument('a sequence increment cannot be 0');
    if (p.minValue > p.maxValue)
      throw failedPrecondition(`sequence ${sequence} has min_value above max_value`);
    const initial =
      p.increment > 0n
        ? p.floor > p.start
          ? p.floor
          : p.start
        : p.floor < p.start
          ? p.floor
          : p.start;
    return transaction(this.pool, async (c) => {
      await c.query('set local synchronous_commit = on');
      await c.query(
        'insert into tessera.sequence_block (sequence, next) values ($1, $2) on conflict (sequence) do nothing',
        [sequence, initial.toString()],
      );
      const { rows } = await c.query<{ next: string }>(
        'select next::text as next from tessera.sequence_block where sequence = $1 for update',
        [sequence],
      );
      const block = blockAt(BigInt(rows[0]!.next), count, p);
      if (block.count > 0n)
        await c.query('update tessera.sequence_block set next = $2 where sequence = $1', [
          sequence,
          (block.first + block.count * p.increment).toString(),
        ]);
      return block;
    });
  }
}
