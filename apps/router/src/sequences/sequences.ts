// What every session shares for cluster-wide sequences (sequences/defaults.ts): the blocks of
// values and the definitions read from the nodes. Types only, so services.ts imports no code.
import type { SequenceBlocks, SequenceDef } from './blocks.js';
import type { EpochCache, TableInfoCache } from './columns.js';

/** What the router shares for sequences: the blocks and the tables' definitions. */
export interface Sequences {
  readonly blocks: SequenceBlocks;
  readonly tables: TableInfoCache;
  /** Sequences by name as written (`select nextval('s')`); null: not the router's. */
  readonly named: EpochCache<SequenceDef | null>;
}
