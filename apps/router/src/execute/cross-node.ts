// What the router runs on every node of a transaction across nodes (txn/machine.ts keeps its
// state): a statement on each part at once (SET, savepoints), and statements that write on
// several nodes in an implicit transaction of their own. COMMIT itself is two-phase.ts; the
// session commands that use these are commands/run-command.ts.
import { Writer, writeQuery, type NoticeFields } from '@tessera/pg-wire';
import type { Analysis, SetAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError } from '../pool/backend.js';
import { HeldOut } from '../session/client-out.js';
import { run1 } from './run.js';
import type { Session } from '../session/session.js';
import { finishTransaction } from './two-phase.js';

/** Statements whose effect lives in the transaction and must be replayed on a joining node. */
export function replayable(a: Analysis): boolean {
  if (a.kind === 'set') return true;
  return (
    a.kind === 'transaction' &&
    (a.action === 'savepoint' || a.action === 'release' || a.action === 'rollback_to')
  );
}

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
    if (b) b.settingsKey = s.settings.keyAfter(a);
  }
  return out;
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
