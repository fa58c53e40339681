// admit(statement, epoch, txn) -> Decision: the one place a statement meets a catalog snapshot,
// read once, and the only caller of route(). Session commands are planned by commands/plan.ts;
// everything else is routed, then refused, held (hold.ts) or let through with the snapshot it
// was routed by. Pure: no I/O, no session object, unit-tested on fixture snapshots.
import type { TransactionStatus } from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import {
  endsFailedTransaction,
  inFailedTransaction,
  isSessionCommand,
  planCommand,
} from '../commands/plan.js';
import { RouterError, unsupported } from '../errors.js';
import { namedSnapshot, type NameContext } from '../routing/names.js';
import { route } from '../routing/route.js';
import type { Route } from '../routing/route-types.js';
import type { Statement } from '../statement/statement.js';
import type { TxnPhase } from '../txn/machine.js';
import type { Admission, Decision } from './decision.js';
import { holdReason, nodesOf, type HoldTxn } from './hold.js';
import { SERIALIZABLE_ACROSS_NODES } from '../txn/isolation.js';

/** What admit reads of the session's transaction. */
export interface AdmitTxn extends HoldTxn {
  readonly phase: TxnPhase;
  /** The status the client sees (E: failed). */
  readonly status: TransactionStatus;
  /** Transaction pooling: backends go back to their pool between transactions. */
  readonly transactionPooling: boolean;
  /** What the session's unqualified table names resolve by (its search_path). */
  readonly names: NameContext;
  /** Whether a statement naming a table ran on `node` in the transaction; on how many nodes. */
  touched(node: string): boolean;
  readonly touchedCount: number;
  /** The transaction is SERIALIZABLE (txn/isolation.ts); asked only when it would span nodes. */
  readonly serializable: boolean;
}

/**
 * `lease`: whether this router's lease with the coordinator holds; while it is lapsed every
 * statement on a node is held (catalog/lease.ts), session commands are still answered.
 */
export function admit<E extends Admission>(
  stmt: Statement,
  epoch: E,
  txn: AdmitTxn,
  lease: 'valid' | 'lapsed' = 'valid',
): Decision<E> {
  const a = stmt.analysis;
  const snapshot = namedSnapshot(epoch.snapshot, txn.names);
  let effect;
  if (isSessionCommand(a)) {
    const plan = planCommand(a, txn.phase, txn.status);
    if (plan.kind === 'local') return { kind: 'local', command: a };
    if (plan.kind === 'refused') return { kind: 'refused', error: plan.error };
    effect = plan.effect;
  } else {
    const refusal = refusedBeforeRouting<E>(a, txn);
    if (refusal !== undefined) return refusal;
  }
  const r = route(a, snapshot, stmt.params);
  if (r.kind === 'refuse')
    return {
      kind: 'refused',
      error:
        r.code === undefined
          ? unsupported(r.message)
          : new RouterError(r.code, r.message, 'ERROR', undefined, r.hint),
      label: 'refused',
    };
  if (stmt.purpose === 'describe') return { kind: 'routed', route: r, epoch, effect };
  if (r.kind === 'params')
    return {
      kind: 'refused',
      error: unsupported('a bind parameter in a simple query'),
      label: 'single',
    };
  if (lease === 'lapsed' && effect === undefined)
    return { kind: 'held', reason: { kind: 'lease' }, epoch };
  if (txn.phase !== 'idle' && a.tables.length > 0 && spansNodes(r, txn) && txn.serializable)
    return { kind: 'refused', error: unsupported(SERIALIZABLE_ACROSS_NODES) };
  const reason = holdReason(a, r, snapshot, stmt.params, txn);
  if (reason !== undefined) return { kind: 'held', reason, epoch };
  return { kind: 'routed', route: r, epoch, effect };
}

/**
 * Whether running `r` (a statement naming tables) makes the transaction's work span more than
 * one node. Parts that ran only statements naming no table (SHOW, `SELECT 1`) do not count.
 */
function spansNodes(r: Route, txn: AdmitTxn): boolean {
  if (r.kind === 'node') {
    // Any node answers it: the transaction's node, or one node if it has none yet.
    if (r.flexible) return txn.touchedCount > 1;
    // Most statements in a transaction: no list of nodes made for one.
    return txn.touchedCount + (txn.touched(r.node) ? 0 : 1) > 1;
  }
  let fresh = 0;
  for (const node of nodesOf(r)) if (!txn.touched(node)) fresh++;
  return txn.touchedCount + fresh > 1;
}

function refusedBeforeRouting<E extends Admission>(
  a: Analysis,
  txn: AdmitTxn,
): Decision<E> | undefined {
  // While the router holds the transaction's state (no node yet, or several), a failed one
  // refuses every statement but its end, as Postgres would. On one node, the node says so.
  if (txn.phase !== 'one' && txn.status === 'E' && !endsFailedTransaction(a))
    return { kind: 'refused', error: inFailedTransaction() };
  return undefined;
}
