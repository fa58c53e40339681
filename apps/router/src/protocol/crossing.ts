// An extended-protocol batch whose statements run on more than one node (a pipeline, a driver's
// batch API, a write across nodes among other statements). Postgres runs the statements of one
// batch, up to its Sync, in one implicit transaction: so does the router. Once a batch crosses
// nodes it runs in a transaction, the client's or one of its own (txn/machine.ts beginImplicit),
// and each node's round ends with the router's own Sync (inside a transaction block, a Sync
// commits nothing). The Sync of the batch commits that implicit transaction (two-phase when it
// wrote on several nodes), or rolls it back after an error, which skipped the rest of the batch.
// A batch on one node never gets here: it keeps its one round and the client's Sync.
import { SYNC } from '@tessera/pg-wire';
import type { SessionCommand } from '../commands/plan.js';
import { unsupported } from '../errors.js';
import { takePrelude } from '../execute/backends.js';
import { EXPECT_OWN_SYNC } from '../execute/exchange.js';
import { Round, sendRound } from '../execute/round.js';
import { finishTransaction } from '../execute/two-phase.js';
import { cursorsEndedBySync } from '../scatter/cursor-wire.js';
import type { Session } from '../session/session.js';

/** What crossing nodes needs of a batch (extended.ts). */
export interface CrossingBatch {
  readonly s: Session;
  /** The round being assembled: one node's messages, sent at once. */
  round: Round;
  /** The batch runs in a transaction across nodes: its rounds end with the router's own Sync. */
  crossed: boolean;
}

/** A statement of the batch failed in a round already sent: the client has its error. */
export class Answered extends Error {
  constructor() {
    super('a statement of the batch failed; its error was sent');
  }
}

/**
 * The batch runs in a transaction from now on: the client's, or its own implicit one (begun
 * here, as if a BEGIN had come before the batch). The round's node joins it after the
 * statements queued there, in the same implicit transaction on that node: a BEGIN after them
 * makes them part of the transaction block, as it does in Postgres.
 */
export function cross(b: CrossingBatch): void {
  const s = b.s;
  if (!b.crossed) {
    b.crossed = true;
    if (!s.txn.inBlock) s.txn.beginImplicit(s.settings.save());
  }
  const round = b.round;
  const node = round.node;
  if (round.backend === undefined || node === undefined || s.txn.has(node)) return;
  takePrelude(s, node, round.messages, round.expect);
  // Its statements were queued before it joined; an open cycle's earlier ones are not known.
  const wrote = round.mayWrite() || s.cycleEpochs.length > 0;
  s.txn.wrote(node, wrote, round.firstEpoch?.snapshot.epoch);
}

/** The round sent with the router's own Sync; the batch's next statements get a new round. */
export async function flushRound(b: CrossingBatch): Promise<void> {
  const round = b.round;
  b.round = new Round();
  if (round.backend === undefined) return;
  round.messages.push(SYNC);
  round.expect.push(EXPECT_OWN_SYNC);
  const result = await sendRound(b.s, round, false);
  if (result.errorAt !== undefined) throw new Answered();
}

/** cross(), then the round sent: what must come before a statement that runs on other nodes. */
export function crossOver(b: CrossingBatch): Promise<void> | undefined {
  cross(b);
  return b.round.backend === undefined ? undefined : flushRound(b);
}

/**
 * Before a session command the router answers itself: transaction control cannot end or turn
 * a batch's own transaction into the client's; one that ends or changes a transaction across
 * nodes comes after the statements queued before it (they are sent first).
 */
export function beforeLocal(b: CrossingBatch, command: SessionCommand): Promise<void> | undefined {
  if (command.kind !== 'transaction' && command.kind !== 'set') return undefined;
  if (b.s.txn.implicit && command.kind === 'transaction')
    throw unsupported(
      'transaction control in a pipeline whose statements run on several nodes is not supported; send a Sync before it',
    );
  if (b.s.txn.phase === 'cross' && b.round.queued) return crossOver(b);
  return undefined;
}

/**
 * The end of a batch that crossed nodes: its last round sent; at its Sync, the batch's own
 * transaction committed (or rolled back if `failed`) and ReadyForQuery sent. Ended by a Flush,
 * the transaction stays open for the next batch (an error skips to the Sync).
 */
export async function finishCrossed(
  b: CrossingBatch,
  endsWithSync: boolean,
  failed: boolean,
): Promise<void> {
  const s = b.s;
  try {
    await flushRound(b);
  } catch (e) {
    if (!(e instanceof Answered)) s.sendError(e);
    failed = true;
  }
  // Portals fetched in parts across nodes close before their implicit transaction ends.
  if (endsWithSync && s.txn.implicit) await cursorsEndedBySync(s);
  if (!endsWithSync) {
    if (failed) s.skipUntilSync = true;
    return;
  }
  if (s.txn.implicit) {
    try {
      await finishTransaction(s, failed ? 'rollback' : 'commit');
    } catch (e) {
      // A COMMIT that failed (a deferred constraint, two-phase commit) rolled back everywhere.
      s.sendError(e);
    }
  }
  s.out.push(s.readyFrame());
}
