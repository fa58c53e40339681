// Statements of a one-node transaction, on the backend the session holds for it. The shape
// drivers send for a prepared statement (Bind, [Describe portal,] Execute, Sync) takes the steps
// the general batch handling (extended.ts) would take for it, and only those: route the Bind,
// check it stays on the transaction's node, prepare if need be, send, settle. Anything else, or
// anything this path is unsure of, returns undefined and goes the general way.
import { bindStatementName } from '@tessera/pg-wire';
import { routeLabel } from '../routing/route-types.js';
import { isWrite } from '../routing/writes.js';
import type { Backend } from '../pool/backend.js';
import { EXPECT_ONE, type Expectation } from './exchange.js';
import type { InMsg } from './client-in.js';
import { replaySettings, settle } from './engage.js';
import { isLocal } from './extended-local.js';
import { run1 } from './run.js';
import type { Session } from './session.js';
import {
  prepareOn,
  preparedExecution,
  pushExecutionTail,
  rewriteBindStatement,
  routeOfBind,
} from './statements.js';
import { replayable } from './txn.js';

/** Runs `batch` on the held transaction's backend when it qualifies; undefined when it does not. */
export function runHeld(s: Session, batch: readonly InMsg[]): Promise<void> | undefined {
  const txn = s.txn;
  if (txn === undefined || txn.crossNode || s.cycleOpen || !preparedExecution(batch))
    return undefined;
  const node = txn.first;
  const held = node === undefined ? undefined : s.held.get(node);
  if (node === undefined || held === undefined || held.backend.dead) return undefined;
  const bind = batch[0]!;
  const rec = s.statements.get(bindStatementName(bind.body));
  const a = rec?.analysis;
  // What the router answers itself, savepoints and SET keep their bookkeeping in the general
  // path; COMMIT and ROLLBACK go to the node like any statement, and settle() ends the transaction.
  if (rec === undefined || a === undefined || isLocal(s, a) || replayable(a)) return undefined;
  const catalog = s.services.catalog();
  if (catalog === undefined) return undefined;
  const r = routeOfBind(a, catalog, bind);
  // A statement for another node makes the transaction cross nodes: the general path.
  if (r === undefined || r.kind !== 'node' || (!r.flexible && r.node !== node)) return undefined;
  s.services.metrics.statements(routeLabel(r));
  txn.wrote(node, isWrite(a));
  const backend = held.backend;
  const messages: Buffer[] = [];
  const expect: Expectation[] = [];
  replaySettings(s, backend, messages, expect);
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
