// The simple query protocol: one Query message, one or more statements, answered with their
// results and one ReadyForQuery. Transaction control and session commands are tracked here;
// everything else is routed and run where the Route says.
import {
  Writer,
  writeCommandComplete,
  writeEmptyQueryResponse,
  type NoticeFields,
} from '@tessera/pg-wire';
import type { Analysis, SetAnalysis, TransactionAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { route } from '../routing/route.js';
import { routeLabel, type Route } from '../routing/route-types.js';
import type { ParamSource } from '../routing/key-hash.js';
import type { InMsg } from './client-in.js';
import { engage, failTransaction, settle } from './engage.js';
import { run1 } from './run.js';
import type { Session } from './session.js';
import { noticeFrame } from './errors-wire.js';
import { runMultiWrite, runOnAll, runSplitInsert } from './fanout.js';
import { isWrite } from '../routing/writes.js';
import {
  crossNodeControl,
  endsFailedTransaction,
  inFailedTransaction,
  replayable,
  setOnEveryNode,
} from './txn.js';
import { runCopySplit } from './copy-in.js';
import { runScatter } from './scatter.js';

/** A simple Query carries no parameters: a `$n` key cannot be known. */
const NO_BIND: ParamSource = () => undefined;

export async function handleQuery(s: Session, m: InMsg): Promise<void> {
  try {
    const sql = m.body.toString('utf8', 0, m.body.length - 1);
    const analyses = s.services.cache.get(sql);
    if (analyses.length === 0) {
      s.out.push(writeEmptyQueryResponse(new Writer(8)).flush());
    } else if (analyses.length === 1) {
      await runStatement(s, analyses[0]!, m);
    } else {
      await runMany(s, analyses, m);
    }
  } catch (e) {
    s.sendError(e);
    if (s.closed) return;
    await failTransaction(s).catch(() => undefined);
  }
  s.out.push(s.readyFrame());
  s.out.flush();
}

function complete(s: Session, tag: string): void {
  s.out.push(writeCommandComplete(new Writer(32), tag).flush());
}

/** One statement: local session commands, or routed. Errors thrown become one ErrorResponse. */
async function runStatement(s: Session, a: Analysis, m: InMsg): Promise<void> {
  // Failed anywhere = failed: a node whose part is still fine must not run the statement.
  if (s.status() === 'E' && !endsFailedTransaction(a)) throw inFailedTransaction();
  switch (a.kind) {
    case 'transaction':
      if (s.txn.phase === 'idle' || s.txn.phase === 'deferred')
        return localTransaction(s, a, (b) => s.out.push(b));
      if (
        s.txn.phase === 'cross' ||
        a.action === 'prepare_transaction' ||
        a.action === 'commit_prepared' ||
        a.action === 'rollback_prepared'
      )
        return crossNodeControl(s, a, (b) => s.out.push(b));
      return forward(s, s.txn.first!, m, a);
    case 'set':
      return runSet(s, a, m);
    case 'discard':
      if (s.inTransaction() && a.target === 'all')
        throw new RouterError('25001', 'DISCARD ALL cannot run inside a transaction block');
      if (a.target === 'all') {
        s.settings.resetAll();
        s.statements.clear();
      }
      return complete(s, `DISCARD ${a.target.toUpperCase()}`);
    case 'deallocate':
      if (a.name === undefined) s.statements.clear();
      else if (!s.statements.delete(a.name))
        throw new RouterError(
          SQLSTATE.invalidSqlStatementName,
          `prepared statement "${a.name}" does not exist`,
        );
      return complete(s, a.name === undefined ? 'DEALLOCATE ALL' : 'DEALLOCATE');
    case 'listen':
    case 'unlisten':
      if (s.services.config.poolMode === 'transaction')
        throw unsupported(
          'LISTEN and UNLISTEN are not supported under transaction pooling (run the router with --pool-mode session)',
        );
      break;
    default:
      break;
  }
  const catalog = s.catalog();
  const r = route(a, catalog, NO_BIND);
  // A read across nodes is counted once planned (scatter) or refused by the planner.
  if (r.kind !== 'scatter') s.services.metrics.statements(routeLabel(r));
  await execute(s, r, a, m);
}

async function execute(s: Session, r: Route, a: Analysis, m: InMsg): Promise<void> {
  switch (r.kind) {
    case 'refuse':
    case 'params':
      throw unsupported(r.kind === 'refuse' ? r.message : 'a bind parameter in a simple query');
    case 'node':
      return forward(s, pickNode(s, r.node, r.flexible), m, a);
    case 'scatter':
      return runScatter(s, r, { analysis: a, rowDescription: true });
    case 'copy':
      if (r.mode === 'node') return forward(s, pickNode(s, r.node, false), m, a);
      return runCopySplit(s, r, a);
    case 'all':
      if (r.nodes.length === 1) return forward(s, pickNode(s, r.nodes[0]!, false), m, a);
      return runOnAll(s, r, a);
    case 'split':
      if (a.kind !== 'insert') throw new Error('split route for a non-INSERT');
      return runSplitInsert(s, r, a);
    case 'multi_write':
      return runMultiWrite(s, r, a);
  }
}

/**
 * The node a statement runs on. Inside a transaction, one any node answers goes to the node the
 * transaction started on; another node joins the transaction (Session.takePrelude).
 */
export function pickNode(s: Session, node: string, flexible: boolean): string {
  const txn = s.txnNode;
  if (txn !== undefined) return flexible ? txn : node;
  if (flexible) {
    // Session pooling or an open cycle: reuse what is held rather than open another backend.
    const first = s.held.keys().next();
    if (first.done !== true) return first.value;
  }
  return node;
}

/** Sends the client's Query to one node and forwards the answer (ReadyForQuery excepted). */
async function forward(s: Session, node: string, m: InMsg, a: Analysis | undefined): Promise<void> {
  const catalog = s.catalog();
  const { backend, messages, expect } = await engage(s, node, catalog);
  s.txn.wrote(node, isWrite(a));
  messages.push(m.raw);
  expect.push({ t: 'query', ready: false });
  // The ReadyForQuery is the session's to send (it knows the status the client should see).
  const result = await run1(s, backend, messages, expect, true);
  afterStatement(s, a, result.error, result.tags);
  settle(s, node);
  if (a?.kind === 'set' && result.error === undefined && !backend.dead)
    backend.settingsKey = s.settings.key();
}

/** Session bookkeeping once a statement ran on a node. */
function afterStatement(
  s: Session,
  a: Analysis | undefined,
  error: NoticeFields | undefined,
  tags: string[],
): void {
  if (a === undefined) return;
  if (error !== undefined) return;
  if (a.kind === 'set') s.settings.apply(a);
  if (replayable(a)) s.txn.replayed(a.sql);
  if (a.kind !== 'transaction') return;
  if (a.action === 'rollback' || tags.includes('ROLLBACK')) {
    const saved = s.txn.savedAtBegin;
    if (saved !== undefined) s.settings.restore(saved);
  }
  if (a.chain && (a.action === 'commit' || a.action === 'rollback'))
    s.txn.chainedOnNode(s.settings.save());
}

async function runSet(s: Session, a: SetAnalysis, m: InMsg): Promise<void> {
  const phase = s.txn.phase;
  if (phase === 'cross') {
    for (const b of await setOnEveryNode(s, a)) s.out.push(b);
    return;
  }
  if (phase === 'one') return forward(s, s.txn.first!, m, a);
  if (phase === 'deferred') {
    // Inside a transaction no node was picked for yet: it runs first thing on that node.
    s.txn.defer(a.sql);
    s.settings.apply(a);
    return complete(s, a.action === 'reset' || a.action === 'reset_all' ? 'RESET' : 'SET');
  }
  if (a.isLocal) {
    s.out.push(noticeFrame('WARNING', '25P01', 'SET LOCAL can only be used in transaction blocks'));
    return complete(s, 'SET');
  }
  // Validated by a node (bad values fail as in Postgres), then remembered for every backend.
  return forward(s, pickNode(s, s.catalog().home, true), m, a);
}

/** BEGIN ... before any node was picked: answered by the router, replayed on the node later. */
export function localTransaction(
  s: Session,
  a: TransactionAnalysis,
  emit: (frame: Buffer) => void,
): void {
  const complete = (tag: string): void => emit(writeCommandComplete(new Writer(32), tag).flush());
  switch (a.action) {
    case 'begin':
      if (!s.txn.begin(a.sql, s.settings.save()))
        emit(noticeFrame('WARNING', '25001', 'there is already a transaction in progress'));
      return complete('BEGIN');
    case 'commit':
    case 'rollback': {
      const failed = s.status() === 'E';
      if (s.txn.phase === 'idle')
        emit(noticeFrame('WARNING', '25P01', 'there is no transaction in progress'));
      const saved = s.txn.end();
      if ((failed || a.action === 'rollback') && saved !== undefined) s.settings.restore(saved);
      return complete(a.action === 'commit' && !failed ? 'COMMIT' : 'ROLLBACK');
    }
    case 'savepoint':
    case 'release':
    case 'rollback_to':
      if (s.txn.phase === 'idle')
        throw new RouterError(
          '25P01',
          `${a.keyword.toUpperCase()} can only be used in transaction blocks`,
        );
      deferSavepoint(s, a);
      return complete(
        a.action === 'savepoint' ? 'SAVEPOINT' : a.action === 'release' ? 'RELEASE' : 'ROLLBACK',
      );
    default:
      throw unsupported(
        `${a.keyword.toUpperCase()} (two-phase commit commands) through the router is not supported`,
      );
  }
}

/** SAVEPOINT, RELEASE or ROLLBACK TO while no node holds the transaction. */
function deferSavepoint(s: Session, a: TransactionAnalysis): void {
  const name = a.savepoint ?? '';
  if (a.action === 'savepoint') s.txn.savepoint(name, s.settings.save());
  else if (a.action === 'release' ? !s.txn.release(name) : !rollbackTo(s, name))
    throw new RouterError('3B001', `savepoint "${name}" does not exist`);
  s.txn.defer(a.sql);
}

function rollbackTo(s: Session, name: string): boolean {
  const at = s.txn.rollbackTo(name);
  if (at === undefined) return false;
  s.settings.restore(new Map(at.settings));
  return true;
}

/** Several statements in one Query: run as one on a single node when they all fit there. */
async function runMany(s: Session, analyses: readonly Analysis[], m: InMsg): Promise<void> {
  const catalog = s.catalog();
  const wasOpen = s.txn.phase === 'one' || s.txn.phase === 'cross';
  if (s.txn.phase === 'cross') {
    // One node runs the whole text: statements every node of the transaction must see cannot be
    // in it, and a failed transaction fails it whatever node it goes to.
    if (analyses.some((a) => a.kind === 'transaction' || a.kind === 'set'))
      throw unsupported(
        'transaction control and SET in a multi-statement query are not supported in a transaction across nodes; send them on their own',
      );
    if (s.status() === 'E') throw inFailedTransaction();
  }
  let node: string | undefined;
  let flexibleOnly = true;
  for (const a of analyses) {
    if (a.kind === 'transaction' || a.kind === 'set' || a.kind === 'show') continue;
    if (
      a.kind === 'discard' ||
      a.kind === 'deallocate' ||
      a.kind === 'listen' ||
      a.kind === 'unlisten'
    ) {
      throw unsupported(
        `${a.kind.toUpperCase()} in a multi-statement query is not supported by the router; send it on its own`,
      );
    }
    const r = route(a, catalog, NO_BIND);
    if (r.kind === 'refuse') throw unsupported(r.message);
    if (r.kind !== 'node')
      throw unsupported(
        'a multi-statement query with a statement that runs on several nodes is not supported yet; send the statements one by one',
      );
    if (r.flexible) continue;
    flexibleOnly = false;
    if (node !== undefined && node !== r.node) {
      throw unsupported(
        `the statements of this query run on different nodes ("${node}" and "${r.node}"); send them one by one`,
      );
    }
    node = r.node;
  }
  s.services.metrics.statements(flexibleOnly ? 'home' : 'single');
  const target = pickNode(s, node ?? catalog.home, node === undefined);
  const { backend, messages, expect } = await engage(s, target, catalog);
  const writes = analyses.some((a) => isWrite(a));
  s.txn.wrote(target, writes);
  messages.push(m.raw);
  expect.push({ t: 'query', ready: false });
  const result = await run1(s, backend, messages, expect, true);
  if (result.error === undefined) {
    for (const a of analyses) if (a.kind === 'set') s.settings.apply(a);
    backend.settingsKey = s.settings.key();
  }
  settle(s, target);
  const txn = s.txn;
  if (txn.phase !== 'one' && txn.phase !== 'cross') return;
  // A transaction begun by this text: its node wrote only if one of these statements did.
  if (!wasOpen) txn.setWritten(target, writes);
  if (result.error !== undefined) {
    // Which of the statements ran is unknown: a node joining later could not be given the same
    // savepoints and settings.
    if (analyses.some((a) => a.kind === 'transaction' || a.kind === 'set')) txn.markUncertain();
    return;
  }
  let replay = [...txn.replayLog];
  for (const a of analyses) {
    if (a.kind === 'transaction' && a.action === 'begin') replay = [a.sql];
    else if (a.kind === 'transaction' && (a.action === 'commit' || a.action === 'rollback'))
      replay = a.chain ? replay.slice(0, 1) : ['BEGIN'];
    else if (replayable(a)) replay.push(a.sql);
  }
  txn.replaceReplay(replay);
}
