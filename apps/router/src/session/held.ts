// Transactions on one node, the way drivers run prepared statements (Bind, [Describe portal,]
// Execute, Sync), without the general batch handling (extended.ts): BEGIN is answered here and
// deferred; the first statement takes its node's backend with the BEGIN ahead of it; later ones,
// COMMIT and ROLLBACK included, go to the held backend. Each takes the steps extended.ts would take
// for it, and only those: route the Bind, check it stays on the transaction's node, prepare if
// need be, send, settle. Anything else, or anything this path is unsure of, goes the general way.
import { BIND_COMPLETE, NO_DATA } from '@tessera/pg-wire';
import { routeLabel } from '../routing/route-types.js';
import { isWrite } from '../routing/writes.js';
import type { Backend } from '../pool/backend.js';
import { EXPECT_ONE, type Expectation } from './exchange.js';
import type { InMsg } from './client-in.js';
import { engageNow, replaySettings, settle } from './engage.js';
import { isLocal } from './extended-local.js';
import { run1 } from './run.js';
import type { Session } from './session.js';
import { localTransaction, pickNode } from './simple-query.js';
import {
  prepareOn,
  pushExecutionTail,
  rewriteBindStatement,
  routeOfBind,
  type PreparedRun,
} from './statements.js';
import { replayable } from './txn.js';

/**
 * BEGIN (any of its forms) outside a transaction, answered by the router as extended.ts would
 * (runLocal): the transaction begins on a node with its first statement. False if `batch` is
 * not that.
 */
export function beginHere(s: Session, batch: readonly InMsg[], run: PreparedRun): boolean {
  const a = run.analysis;
  if (a.kind !== 'transaction' || a.action !== 'begin') return false;
  if (s.txn.phase !== 'idle' || s.cycleOpen) return false;
  const out = s.out;
  out.push(BIND_COMPLETE);
  if (batch.length === 4) out.push(NO_DATA); // Describe of a portal the router runs
  localTransaction(s, a, (b) => out.push(b));
  out.push(s.readyFrame());
  out.flush();
  return true;
}

/**
 * Runs `batch` on the node of a one-node transaction (begun or deferred) when it qualifies;
 * undefined when it does not.
 */
export function runHeld(
  s: Session,
  batch: readonly InMsg[],
  run: PreparedRun,
): Promise<void> | undefined {
  if (s.cycleOpen) return undefined;
  const phase = s.txn.phase;
  // Deferred (BEGIN answered here, no node yet) or on one node; a failed one goes the general way.
  if (phase === 'idle' || phase === 'cross' || (phase === 'deferred' && s.status() === 'E'))
    return undefined;
  const { rec, analysis: a } = run;
  // What the router answers itself, savepoints and SET keep their bookkeeping in the general
  // path; COMMIT and ROLLBACK go to the node like any statement, and settle() ends the transaction.
  if (isLocal(s, a) || replayable(a)) return undefined;
  const bind = batch[0]!;
  const catalog = s.services.catalog();
  if (catalog === undefined) return undefined;
  const r = routeOfBind(a, catalog, bind);
  if (r === undefined || r.kind !== 'node') return undefined;
  const messages: Buffer[] = [];
  const expect: Expectation[] = [];
  let node: string;
  let backend: Backend;
  if (phase === 'deferred') {
    // The first statement: its node's backend, with the deferred BEGIN ahead of it. Nothing can
    // throw here without a transaction; a backend to wait for goes the general way.
    node = pickNode(s, r.node, r.flexible);
    const now = engageNow(s, node, catalog, true, messages, expect);
    if (now === undefined) return undefined;
    backend = now;
  } else {
    const first = s.txn.first;
    const held = first === undefined ? undefined : s.held.get(first);
    // A statement for another node makes the transaction cross nodes: the general path.
    if (first === undefined || held === undefined || held.backend.dead) return undefined;
    if (!r.flexible && r.node !== first) return undefined;
    node = first;
    backend = held.backend;
    replaySettings(s, backend, messages, expect);
  }
  s.services.metrics.statements(routeLabel(r));
  s.txn.wrote(node, isWrite(a));
  const name = prepareOn(backend, rec, s.settings.key(), messages, expect);
  messages.push(name === '' ? bind.raw : rewriteBindStatement(bind.body, name));
  expect.push(EXPECT_ONE);
  pushExecutionTail(batch, messages, expect);
  return send(s, backend, node, messages, expect);
}

/** As the end of handleBatch for a batch ending with Sync. */
async function send(
  s: Session,
  backend: Backend,
  node: string,
  messages: Buffer[],
  expect: Expectation[],
): Promise<void> {
  try {
    await run1(s, backend, messages, expect);
  } catch (e) {
    s.sendError(e);
    s.out.push(s.readyFrame());
    s.out.flush();
    return;
  }
  // The Sync's ReadyForQuery was forwarded; it is the session's status now too.
  settle(s, node);
  s.out.flush();
}
