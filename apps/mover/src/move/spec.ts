// A move job's spec (what `tessera range move` submits) and its steps, and the plan its first
// step writes into the job (durable: every later step, and a mover resuming the job, reads it).
export interface MoveSpec {
  keyspace: string;
  /** The range's lo bound (signed 64-bit, decimal). */
  lo: string;
  /** The target node. */
  to: string;
  /** Stop after the plan step: print it, change nothing. */
  planOnly?: boolean;
}

export const MOVE_STEPS = [
  'plan',
  'prepare',
  'copy',
  'sync',
  'cutover',
  'verify',
  'teardown',
  'delete',
] as const;
export type MoveStep = (typeof MOVE_STEPS)[number];

/**
 * The phases a move records, in order (what `tessera jobs show` prints, and the kill points of
 * TESSERA_MOVER_FAULT): the kill matrix and the soak's `kill-mover` fault strike at each.
 */
export const MOVE_PHASES = [
  'planned',
  'preparing',
  'prepared',
  'copying',
  'catching up',
  'frozen',
  'flipped',
  'verifying',
  'cleaning up',
  'deleting',
] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];

export interface PlannedTable {
  schema: string;
  name: string;
  keyColumn: string;
  /** Rows and bytes of the range in this table on the source (estimated on big tables). */
  rows: number;
  bytes: number;
  /** Missing on the target: the prepare step creates it from the source's definition. */
  missingOnTarget: boolean;
  /** Columns in name order, for the verification digests (independent of column order). */
  columns: string[];
}

export interface PlannedDatabase {
  name: string;
  tables: PlannedTable[];
}

export interface PlanCheck {
  name: string;
  ok: boolean;
  /** One sentence: what was found, and when refused, what to do. */
  sentence: string;
}

export interface MovePlan {
  keyspace: string;
  keyType: 'bigint' | 'int' | 'smallint' | 'text' | 'uuid';
  seed: string;
  lo: string;
  hi: string;
  source: string;
  target: string;
  databases: PlannedDatabase[];
  rows: number;
  bytes: number;
  checks: PlanCheck[];
  /** The sentences of the failed checks; a move with any is refused. */
  refusals: string[];
  warnings: string[];
  /** Every step the move will take, in order, as sentences. */
  steps: string[];
  estimate: {
    copySeconds: number;
    verifySeconds: number;
    deleteSeconds: number;
    totalSeconds: number;
  };
}
