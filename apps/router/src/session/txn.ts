// What the router does for a transaction across nodes (txn/machine.ts keeps its state): SET and
// savepoints on every node, BEGIN/COMMIT/ROLLBACK answered by the router, and statements that
// write on several nodes in an implicit transaction of their own. COMMIT itself is two-phase.ts.
import { Writer, writeCommandComplete, writeQuery, type NoticeFields } from '@tessera/pg-wire';
import type { Analysis, SetAnalysis, TransactionAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { BackendError } from '../pool/backend.js';
import { HeldOut } from './client-out.js';
import { noticeFrame } from './errors-wire.js';
import { run1 } from './run.js';
import type { Session } from './session.js';
import { finishTransaction } from './two-phase.js';

/** Statements whose effect lives in the transaction and must be replayed on a joining node. */
export function replayable(a: Analysis): boolean {
  if (a.kind === 'set') return true;
  return (
    a.kind === 'transaction' &&
    (a.action === 'savepoint' || a.action === 'release' || a.action === 'rollback_to')
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

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();

/**
 * Runs `sql` on every node of the transaction at once; resolves with the first node's answer
 * (CommandComplete, notices), or throws the first node's error unchanged. Every exchange has
 * finished when it returns, so no backend is left mid-answer.
 */
export async function everyTxnNode(s: Session, sql: string): Promise<Buffer[]> {
  if (s.txn.phase !== 'one' && s.txn.phase !== 'cross')
    throw new Error('everyTxnNode outside a transaction');
  const runs = await Promise.allSettled(
    [...s.txn.parts()].map(async ([node], i) => {
      const h = s.held.get(node);
      if (h === undefined || h.backend.dead)
        throw new RouterError(
          SQLSTATE.connectionFailure,
          `the connection to node "${node}" of this transaction was lost`,
        );
      const out = new HeldOut(i === 0);
      const r = await run1(s, h.backend, [q(sql)], [{ t: 'query', ready: false }], false, out);
      return { out, error: r.error };
    }),
  );
  const done: { out: HeldOut; error: NoticeFields | undefined }[] = [];
  for (const r of runs) {
    if (r.status === 'rejected') throw r.reason;
    done.push(r.value);
  }
  for (const r of done) if (r.error !== undefined) throw new BackendError(r.error);
  return done[0]?.out.pieces ?? [];
}

/** SET in a transaction across nodes: every node takes it, and a node joining later replays it. */
export async function setOnEveryNode(s: Session, a: SetAnalysis): Promise<Buffer[]> {
  const out = await everyTxnNode(s, a.sql);
  s.settings.apply(a);
  s.txn.replayed(a.sql);
  for (const [node] of s.txn.parts()) {
    const b = s.held.get(node)?.backend;
    if (b) b.settingsKey = s.settings.key();
  }
  return out;
}

/**
 * BEGIN, COMMIT, ROLLBACK and savepoints in a transaction the router answers itself (phase
 * cross). Savepoints run on every node, so a ROLLBACK TO undoes each node's part alike.
 */
export async function crossNodeControl(
  s: Session,
  a: TransactionAnalysis,
  emit: (frame: Buffer) => void,
): Promise<void> {
  const txn = s.txn;
  const complete = (tag: string): void => emit(writeCommandComplete(new Writer(32), tag).flush());
  switch (a.action) {
    case 'begin':
      emit(noticeFrame('WARNING', '25001', 'there is already a transaction in progress'));
      return complete('BEGIN');
    case 'commit':
    case 'rollback': {
      const begin = txn.beginSql;
      const tag = await finishTransaction(s, a.action);
      // A new transaction with the same characteristics, begun lazily like any other.
      if (a.chain) txn.chain(begin, s.settings.save());
      return complete(tag);
    }
    case 'savepoint':
    case 'release':
    case 'rollback_to': {
      if (txn.broken)
        throw new RouterError(
          SQLSTATE.inFailedTransaction,
          'the connection to a node of this transaction was lost, so its work there is gone; only ROLLBACK can end the transaction',
        );
      for (const b of await everyTxnNode(s, a.sql)) emit(b);
      txn.replayed(a.sql);
      return;
    }
    default:
      throw unsupported(
        `${a.keyword.toUpperCase()} (two-phase commit commands) through the router is not supported`,
      );
  }
}

/**
 * Runs a statement that writes on several nodes inside the client's transaction or, outside one,
 * in an implicit transaction of its own, committed here (two-phase when it wrote on several
 * nodes) or rolled back. `body` runs the statement and returns the error it ended with, if any;
 * that error is thrown after the implicit transaction rolled back (in the client's transaction,
 * the failed node has failed it, or the caller's failTransaction does).
 */
export async function atomically(
  s: Session,
  body: () => Promise<Error | undefined>,
): Promise<void> {
  const implicit = !s.inTransaction();
  if (implicit) s.txn.begin('BEGIN', s.settings.save());
  let error: Error | undefined;
  try {
    error = await body();
  } catch (e) {
    if (implicit) await finishTransaction(s, 'rollback').catch(() => undefined);
    throw e;
  }
  if (implicit) await finishTransaction(s, error === undefined ? 'commit' : 'rollback');
  if (error !== undefined) throw error;
}
