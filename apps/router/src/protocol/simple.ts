// The simple query protocol: one Query message, one or more statements, answered with their
// results and one ReadyForQuery. Each statement is admitted (protocol/admission.ts) and then
// answered by the router (commands/run-command.ts) or run by the executor; several in one text
// run as one on a single node (admit/many.ts).
import { Writer, writeEmptyQueryResponse, writeQuery } from '@tessera/pg-wire';
import { sessionStateOfAll, type Analysis } from '@tessera/sql';
import { admitMany } from '../admit/many.js';
import type { Effect } from '../commands/plan.js';
import { runCommand } from '../commands/run-command.js';
import { failTransaction } from '../execute/backends.js';
import { replayable } from '../execute/cross-node.js';
import type { ExchangeResult } from '../execute/exchange.js';
import { execute } from '../execute/executor.js';
import { waitWhileHeld } from '../execute/hold.js';
import { isWrite } from '../routing/writes.js';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import { simpleStatement } from '../statement/statement.js';
import { admitted, txnView } from './admission.js';
import { cursorsEndedBy, dropPortal } from '../scatter/cursor-wire.js';
import { runExecuteQuery } from './execute-sql.js';
import { filledText, forgetAfterDdl } from '../sequences/defaults.js';
import { noteDdl } from '../session/names.js';
import { rewriteQuery } from '../session/rewrite.js';

const ignore = (): void => undefined;

/** A Query destroys the unnamed prepared statement and replaces the unnamed portal, as in Postgres. */
function dropUnnamed(s: Session): Promise<void> | undefined {
  s.statements.delete('');
  const portal = s.portals.get('');
  if (portal === undefined) return undefined;
  s.portals.delete('');
  return dropPortal(s, portal);
}

export async function handleQuery(s: Session, m: InMsg): Promise<void> {
  try {
    // Awaited only when there is something to wait for: the common Query stays on this tick.
    const dropping = dropUnnamed(s);
    if (dropping !== undefined) await dropping;
    const sql = m.body.toString('utf8', 0, m.body.length - 1);
    const parsed = s.services.cache.get(sql);
    if (parsed.length === 0) {
      s.out.push(writeEmptyQueryResponse(new Writer(8)).flush());
    } else {
      // Views read as their queries, fences and sizes as the cluster's (session/rewrite.ts).
      const got0 = rewriteQuery(s, sql, parsed);
      const viewed = got0 instanceof Promise ? await got0 : got0;
      const analyses = viewed?.analyses ?? parsed;
      // Values the router makes itself (cluster-wide sequences) are written in first.
      const got = filledText(s, analyses);
      const f = got instanceof Promise ? await got : got;
      const text = f?.sql ?? viewed?.sql;
      const raw =
        text === undefined ? m.raw : writeQuery(new Writer(text.length + 8), text).flush();
      const list = f?.analyses ?? analyses;
      noteDdl(s, list);
      const only = list.length === 1 ? list[0]! : undefined;
      if (only?.kind === 'execute') {
        // Answered as a batch ending with a Sync: its ReadyForQuery is the Query's.
        await runExecuteQuery(s, only);
        return;
      }
      if (only !== undefined) await runOne(s, only, raw);
      else await runMany(s, list, raw);
      forgetAfterDdl(s, list);
    }
  } catch (e) {
    s.sendError(e);
    if (s.closed) return;
    await failTransaction(s).catch(() => undefined);
  }
  s.out.push(s.readyFrame());
  s.out.flush();
}

/** One statement: answered by the router, or run where its route says. Errors are thrown. */
async function runOne(s: Session, a: Analysis, raw: Buffer): Promise<void> {
  const stmt = simpleStatement(a);
  const got = admitted(s, stmt);
  const d = got instanceof Promise ? await got : got;
  switch (d.kind) {
    case 'refused':
      throw d.error;
    case 'local':
      return runCommand(s, d.command, (b) => s.out.push(b));
    case 'routed':
      return execute(s, stmt, d, { kind: 'query', raw, result: ignore });
    case 'held':
      throw new Error('a held statement came back held');
  }
}

/** Several statements in one Query: run as one text on the one node they all fit on. */
async function runMany(s: Session, analyses: readonly Analysis[], raw: Buffer): Promise<void> {
  for (const a of analyses) await cursorsEndedBy(s, a);
  let d = admitMany(analyses, s.epoch(), txnView(s));
  if (d.kind === 'held') d = await waitWhileHeld(s, d, (e) => admitMany(analyses, e, txnView(s)));
  if (d.kind === 'refused') throw d.error;
  if (d.kind !== 'routed') throw new Error(`a multi-statement query admitted as ${d.kind}`);
  const wasOpen = s.txn.phase === 'one' || s.txn.phase === 'cross';
  const writes = analyses.some((a) => isWrite(a));
  const effects: Effect[] = [];
  for (const a of analyses)
    if (a.kind === 'set') effects.push({ kind: 'set', analysis: a, replay: false });
  // The statement the executor looks at: a write if any is.
  const main = analyses.find((a) => isWrite(a) && a.kind !== 'set' && a.kind !== 'transaction');
  const stmt = simpleStatement(main ?? analyses[0]!);
  await execute(s, stmt, d, {
    kind: 'query',
    raw,
    effects,
    state: sessionStateOfAll(analyses),
    result: (r, node) => afterMany(s, analyses, wasOpen, writes, r, node),
  });
}

/** The transaction's bookkeeping after a multi-statement text ran on `node`. */
function afterMany(
  s: Session,
  analyses: readonly Analysis[],
  wasOpen: boolean,
  writes: boolean,
  result: ExchangeResult,
  node: string,
): void {
  const txn = s.txn;
  if (txn.phase !== 'one' && txn.phase !== 'cross') return;
  // A transaction begun by this text: its node wrote only if one of these statements did.
  if (!wasOpen) txn.setWritten(node, writes);
  else txn.wrote(node, writes);
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
