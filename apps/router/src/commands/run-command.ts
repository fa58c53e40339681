// The session commands the router answers itself (plan.ts said `local`), the same for both
// protocols: BEGIN before a node is picked, COMMIT/ROLLBACK/savepoints with no node yet or
// across nodes, SET before a node is picked (checked by a node in a transaction of its own) or
// across nodes, DISCARD, PREPARE and DEALLOCATE. `emit` takes the answer's frames in order. Synchronous
// (undefined) when nothing has to wait.
import { Writer, writeCommandComplete, writeQuery } from '@tessera/pg-wire';
import {
  sessionStateOf,
  type DeallocateAnalysis,
  type DiscardAnalysis,
  type SetAnalysis,
  type TransactionAnalysis,
} from '@tessera/sql';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError } from '../pool/backend.js';
import { HeldOut } from '../session/client-out.js';
import { noticeFrame } from '../session/errors-wire.js';
import type { Session } from '../session/session.js';
import { applyState, engage, pickNode, settle } from '../execute/backends.js';
import { everyTxnNode, setOnEveryNode } from '../execute/cross-node.js';
import { run1 } from '../execute/run.js';
import { finishTransaction } from '../execute/two-phase.js';
import { prepareSql } from '../statement/sql-prepared.js';
import { closeCursors } from '../scatter/cursor.js';
import type { SessionCommand } from './plan.js';

type Emit = (frame: Buffer) => void;

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();
/**
 * CommandComplete frames by tag, built once each (STYLE.md: constant frames): BEGIN and COMMIT
 * are answered here for most transactions. Bounded, as a tag a node sent (SET) is kept too.
 */
const tagFrames = new Map<string, Buffer>();
const MAX_TAG_FRAMES = 32;

const tag = (emit: Emit, text: string): undefined => {
  let frame = tagFrames.get(text);
  if (frame === undefined) {
    frame = writeCommandComplete(new Writer(text.length + 8), text).flush();
    if (tagFrames.size < MAX_TAG_FRAMES) tagFrames.set(text, frame);
  }
  emit(frame);
  return undefined;
};

export function runCommand(s: Session, a: SessionCommand, emit: Emit): Promise<void> | undefined {
  switch (a.kind) {
    case 'transaction':
      return transaction(s, a, emit);
    case 'set':
      return s.txn.phase === 'cross' ? setAcross(s, a, emit) : setDeferred(s, a, emit);
    case 'discard':
      return discard(s, a, emit);
    case 'deallocate':
      return deallocate(s, a, emit);
    case 'prepare':
      return prepareSql(s, a).then(() => void tag(emit, 'PREPARE'));
  }
}

function transaction(s: Session, a: TransactionAnalysis, emit: Emit): Promise<void> | undefined {
  switch (a.action) {
    case 'begin':
      if (!s.txn.begin(a.sql, s.settings.save()))
        emit(noticeFrame('WARNING', '25001', 'there is already a transaction in progress'));
      return tag(emit, a.keyword === 'start' ? 'START TRANSACTION' : 'BEGIN');
    case 'commit':
    case 'rollback':
      return s.txn.phase === 'cross' ? endAcross(s, a, emit) : endHere(s, a, emit);
    default:
      return savepoint(s, a, emit);
  }
}

/** COMMIT or ROLLBACK with no node holding the transaction (or none at all). */
function endHere(s: Session, a: TransactionAnalysis, emit: Emit): undefined {
  const verb = a.action === 'commit' ? 'COMMIT' : 'ROLLBACK';
  if (s.txn.phase === 'idle') {
    if (a.chain)
      throw new RouterError(
        SQLSTATE.noActiveSqlTransaction,
        `${verb} AND CHAIN can only be used in transaction blocks`,
      );
    emit(noticeFrame('WARNING', '25P01', 'there is no transaction in progress'));
    return tag(emit, verb);
  }
  const failed = s.status() === 'E';
  const begin = s.txn.beginSql;
  const saved = s.txn.end();
  if ((failed || a.action === 'rollback') && saved !== undefined) s.settings.restore(saved);
  // A new transaction with the same characteristics, begun lazily like the first.
  if (a.chain) s.txn.chain(begin, s.settings.save());
  return tag(emit, a.action === 'commit' && !failed ? 'COMMIT' : 'ROLLBACK');
}

/** COMMIT or ROLLBACK of a transaction across nodes: two-phase.ts. */
async function endAcross(s: Session, a: TransactionAnalysis, emit: Emit): Promise<void> {
  const begin = s.txn.beginSql;
  const done = await finishTransaction(s, a.action as 'commit' | 'rollback');
  if (a.chain) s.txn.chain(begin, s.settings.save());
  tag(emit, done);
}

const SAVEPOINT_WORDS = {
  savepoint: ['SAVEPOINT', 'SAVEPOINT'],
  release: ['RELEASE SAVEPOINT', 'RELEASE'],
  rollback_to: ['ROLLBACK TO SAVEPOINT', 'ROLLBACK'],
} as const;

/** SAVEPOINT, RELEASE, ROLLBACK TO with no node holding the transaction, or across nodes. */
function savepoint(s: Session, a: TransactionAnalysis, emit: Emit): Promise<void> | undefined {
  if (a.action !== 'savepoint' && a.action !== 'release' && a.action !== 'rollback_to')
    throw new Error(`not a savepoint command: ${a.action}`);
  const [statement, done] = SAVEPOINT_WORDS[a.action];
  const name = a.savepoint ?? '';
  switch (s.txn.phase) {
    case 'idle':
      throw new RouterError(
        SQLSTATE.noActiveSqlTransaction,
        `${statement} can only be used in transaction blocks`,
      );
    case 'deferred':
      trackSavepoint(s, a.action, name);
      s.txn.defer(a.sql);
      return tag(emit, done);
    default:
      return savepointAcross(s, a, name, emit);
  }
}

/** The router's record of a savepoint command; 3B001 for a name no savepoint has. */
function trackSavepoint(
  s: Session,
  action: 'savepoint' | 'release' | 'rollback_to',
  name: string,
): void {
  if (action === 'savepoint') return s.txn.savepoint(name, s.settings.save());
  if (action === 'release' && s.txn.release(name)) return;
  const at = action === 'rollback_to' ? s.txn.rollbackTo(name) : undefined;
  if (at === undefined)
    throw new RouterError(SQLSTATE.invalidSavepoint, `savepoint "${name}" does not exist`);
  s.settings.restore(new Map(at.settings));
}

/** Savepoints run on every node, so a ROLLBACK TO undoes each node's part alike. */
async function savepointAcross(
  s: Session,
  a: TransactionAnalysis,
  name: string,
  emit: Emit,
): Promise<void> {
  if (s.txn.broken)
    throw new RouterError(
      SQLSTATE.inFailedTransaction,
      'the connection to a node of this transaction was lost, so its work there is gone; only ROLLBACK can end the transaction',
    );
  for (const b of await everyTxnNode(s, a.sql)) emit(b);
  trackSavepoint(s, a.action as 'savepoint' | 'release' | 'rollback_to', name);
  s.txn.replayed(a.sql);
  for (const [node] of s.txn.parts()) {
    const b = s.held.get(node)?.backend;
    if (b !== undefined) b.settingsKey = s.settings.key();
  }
}

async function setAcross(s: Session, a: SetAnalysis, emit: Emit): Promise<void> {
  for (const b of await setOnEveryNode(s, a)) emit(b);
}

/**
 * SET before a node is picked: a node checks it (and says its tag) in a transaction of its own,
 * rolled back, after the transaction's own BEGIN and deferred statements; then it is deferred to
 * the node the transaction picks, so a one-node transaction stays on one node.
 */
async function setDeferred(s: Session, a: SetAnalysis, emit: Emit): Promise<void> {
  const snapshot = s.epoch().snapshot;
  const node = pickNode(s, snapshot.home, true);
  const e = await engage(s, node, snapshot, false);
  e.messages.push(q([...s.txn.prelude, a.sql].join('; ')), q('ROLLBACK'));
  e.expect.push({ t: 'query', ready: false }, { t: 'quiet' });
  let result;
  try {
    result = await run1(s, e.backend, e.messages, e.expect, true, new HeldOut(false));
  } finally {
    settle(s, node);
  }
  if (result.error !== undefined) throw new BackendError(result.error);
  s.txn.defer(a.sql);
  s.settings.apply(a);
  tag(emit, result.tags[result.tags.length - 1] ?? 'SET');
}

async function discard(s: Session, a: DiscardAnalysis, emit: Emit): Promise<void> {
  if (a.target === 'all') {
    // DISCARD ALL closes every cursor, WITH HOLD ones too: the router's first, so their nodes'
    // backends are between statements when they run it.
    s.sqlCursors.clear();
    await closeCursors(s);
  }
  if (a.target === 'all' || a.target === 'temp') {
    // The backends kept for session state lose it there, and serve others again once none is left.
    const change = sessionStateOf(a);
    for (const node of s.pinned.nodes()) {
      const h = s.held.get(node);
      if (h === undefined || h.backend.dead) {
        s.pinned.forget(node);
        continue;
      }
      const r = await run1(s, h.backend, [q(a.sql)], [{ t: 'quiet' }], false, new HeldOut(false));
      if (r.quietError !== undefined) throw new BackendError(r.quietError);
      applyState(s, node, change);
      settle(s, node);
    }
  }
  if (a.target === 'all') {
    s.settings.resetAll();
    s.statements.clear();
    s.portals.clear();
  }
  tag(emit, `DISCARD ${a.target.toUpperCase()}`);
}

function deallocate(s: Session, a: DeallocateAnalysis, emit: Emit): undefined {
  if (a.name === undefined) {
    s.statements.clear();
    return tag(emit, 'DEALLOCATE ALL');
  }
  if (!s.statements.delete(a.name))
    throw new RouterError(
      SQLSTATE.invalidSqlStatementName,
      `prepared statement "${a.name}" does not exist`,
    );
  return tag(emit, 'DEALLOCATE');
}
