// Session commands (BEGIN, COMMIT, ROLLBACK, savepoints, SET, SET LOCAL, RESET, DISCARD,
// PREPARE, DEALLOCATE) decided once for both protocols, exactly as Postgres behaves: what the router
// answers itself (run-command.ts), what a node runs and what the router records once it
// succeeded (an Effect, effects.ts), and what is refused. Pure: the transaction's phase and
// status in, a plan out.
import type { TransactionStatus } from '@tessera/pg-wire';
import type {
  Analysis,
  DeallocateAnalysis,
  DiscardAnalysis,
  PrepareAnalysis,
  SetAnalysis,
  TransactionAnalysis,
} from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import type { TxnPhase } from '../txn/machine.js';

export type SessionCommand =
  TransactionAnalysis | SetAnalysis | DiscardAnalysis | DeallocateAnalysis | PrepareAnalysis;

/** What the router records after a node ran a session command without error. */
export type Effect =
  /** `replay` false: the caller keeps the transaction's replay log itself (a multi-statement text). */
  | { readonly kind: 'set'; readonly analysis: SetAnalysis; readonly replay?: boolean }
  | { readonly kind: 'savepoint'; readonly name: string; readonly sql: string }
  | { readonly kind: 'release'; readonly name: string; readonly sql: string }
  | { readonly kind: 'rollback_to'; readonly name: string; readonly sql: string }
  /** The one node's COMMIT or ROLLBACK (`rolledBack`: a failed transaction's COMMIT too). */
  | { readonly kind: 'end'; readonly rolledBack: boolean; readonly chain: boolean };

export type CommandPlan =
  /** The router answers it (run-command.ts). */
  | { readonly kind: 'local' }
  /** A node runs it (the transaction's node, or any node outside one); then `effect`. */
  | { readonly kind: 'node'; readonly effect: Effect | undefined }
  | { readonly kind: 'refused'; readonly error: RouterError };

const LOCAL: CommandPlan = Object.freeze({ kind: 'local' });
const NODE: CommandPlan = Object.freeze({ kind: 'node', effect: undefined });

export function isSessionCommand(a: Analysis): a is SessionCommand {
  return (
    a.kind === 'transaction' ||
    a.kind === 'set' ||
    a.kind === 'discard' ||
    a.kind === 'deallocate' ||
    a.kind === 'prepare'
  );
}

/** Statements Postgres still accepts in a failed transaction. */
export function endsFailedTransaction(a: Analysis): boolean {
  return (
    a.kind === 'transaction' &&
    (a.action === 'rollback' || a.action === 'rollback_to' || a.action === 'commit')
  );
}

export const inFailedTransaction = (): RouterError =>
  new RouterError(
    SQLSTATE.inFailedTransaction,
    'current transaction is aborted, commands ignored until end of transaction block',
  );

const refused = (error: RouterError): CommandPlan => ({ kind: 'refused', error });
const node = (effect: Effect): CommandPlan => ({ kind: 'node', effect });

/**
 * The plan for session command `a` in a transaction in `phase` whose client sees `status`. In a
 * one-node transaction the node answers everything itself (errors included); before a node is
 * picked and across nodes the router does.
 */
export function planCommand(
  a: SessionCommand,
  phase: TxnPhase,
  status: TransactionStatus,
): CommandPlan {
  // Answered by the router while it holds the transaction's state: a failed one refuses all
  // but its end, as Postgres does. (On one node, the node says so itself.)
  if (status === 'E' && phase !== 'one' && !endsFailedTransaction(a))
    return refused(inFailedTransaction());
  switch (a.kind) {
    case 'transaction':
      return planTransaction(a, phase, status);
    case 'set':
      return planSet(a, phase);
    case 'discard':
      if (status === 'E') return refused(inFailedTransaction());
      if (a.target === 'all' && phase !== 'idle')
        return refused(
          new RouterError(
            SQLSTATE.activeSqlTransaction,
            'DISCARD ALL cannot run inside a transaction block',
          ),
        );
      return LOCAL;
    case 'deallocate':
    // PREPARE is checked by a node in the session's context, then kept by the router
    // (statement/sql-prepared.ts).
    case 'prepare':
      return status === 'E' ? refused(inFailedTransaction()) : LOCAL;
  }
}

function planTransaction(
  a: TransactionAnalysis,
  phase: TxnPhase,
  status: TransactionStatus,
): CommandPlan {
  switch (a.action) {
    case 'prepare_transaction':
    case 'commit_prepared':
    case 'rollback_prepared':
      return refused(
        unsupported(
          `${a.keyword.toUpperCase()} (two-phase commit commands) through the router is not supported`,
        ),
      );
    case 'begin':
      return phase === 'one' ? NODE : LOCAL;
    case 'commit':
    case 'rollback':
      if (phase !== 'one') return LOCAL;
      return node({
        kind: 'end',
        rolledBack: a.action === 'rollback' || status === 'E',
        chain: a.chain,
      });
    case 'savepoint':
    case 'release':
    case 'rollback_to':
      if (phase !== 'one') return LOCAL;
      return node({ kind: a.action, name: a.savepoint ?? '', sql: a.sql });
  }
}

function planSet(a: SetAnalysis, phase: TxnPhase): CommandPlan {
  switch (phase) {
    // Outside a transaction and on one node, a node checks it (a bad value fails as in Postgres).
    case 'idle':
    case 'one':
      return node({ kind: 'set', analysis: a });
    // Before a node is picked: checked by a node in a transaction of its own, then deferred.
    // Across nodes: run on every node.
    case 'deferred':
    case 'cross':
      return LOCAL;
  }
}
