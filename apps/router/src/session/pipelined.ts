// Reads of several clients pipelined on one backend. An autocommit read joins the pipeline of a
// backend already running such reads (a lane, with the statement prepared and the same settings)
// rather than take a backend of its own: its Bind/Execute/Sync follow the other clients' on the
// connection, each ending with its own Sync, and the node answers in the same order, so each
// answer goes to its own client (the backend's sink queue). Fewer backends serve more clients, and
// the node reads several statements per wake-up. When no lane has room (or the open ones are stuck
// on a slow read) the read opens a new lane on an idle backend, or waits for one in turn; lanes
// take a bounded number of reads per turn, so clients waiting for a backend of their own are
// served too (pool.ts).
//
// Only statements that cannot wait on another session are pipelined (one stuck behind a lock would
// hold up the statements queued after it): plain SELECTs with no locking clause, no data-modifying
// CTE, and no function outside the read-only list of routing/writes.ts. Everything else (writes,
// transactions, unnamed statements) takes a backend of its own as before.
import type { Analysis } from '@tessera/sql';
import { routeLabel } from '../routing/route-types.js';
import { isWrite } from '../routing/writes.js';
import { EXPECT_ONE, type Expectation } from './exchange.js';
import type { InMsg } from './client-in.js';
import { poolFor, replaySettings } from './engage.js';
import { runShared } from './run.js';
import type { Session } from './session.js';
import {
  pushExecutionTail,
  rewriteBindStatement,
  routeOfBind,
  type PreparedRun,
  type StatementRecord,
} from './statements.js';
import type { Backend } from '../pool/backend.js';
import type { Pool } from '../pool/pool.js';

/**
 * Whether `a` is a read that may share a backend with other sessions' reads: a SELECT that is
 * clearly read-only (routing/writes.ts: no locking clause, no data-modifying CTE, only functions
 * known to neither write nor wait).
 */
export function pipelinableRead(a: Analysis): boolean {
  return a.kind === 'select' && !isWrite(a);
}

/**
 * Runs `batch` pipelined on a shared backend when it qualifies (see above); undefined when it
 * does not, and the caller handles it as usual.
 */
export function runPipelined(
  s: Session,
  batch: readonly InMsg[],
  run: PreparedRun,
): Promise<void> | undefined {
  const config = s.services.config;
  if (config.pipelineDepth <= 1 || config.poolMode !== 'transaction') return undefined;
  if (s.txn.phase !== 'idle' || s.cycleOpen || s.held.size > 0) return undefined;
  const { rec, analysis: a } = run;
  if (!pipelinableRead(a)) return undefined;
  const bind = batch[0]!;
  const catalog = s.services.catalog();
  if (catalog === undefined) return undefined;
  const r = routeOfBind(a, catalog, bind);
  if (r === undefined || r.kind !== 'node') return undefined;
  const pool = poolFor(s, catalog, r.node);
  const key = s.settings.key();
  const name = rec.serverName(key);
  if (name === '') return undefined;
  s.services.metrics.statements(routeLabel(r));
  const lent = pool.lend(config.pipelineDepth, name, key);
  if (lent !== undefined) return send(s, pool, lent, rec, name, batch);
  return acquireLane(s, pool, rec, name, batch);
}

/** No lane has room: a backend from the pool (waiting in turn if need be) opens a new one. */
async function acquireLane(
  s: Session,
  pool: Pool,
  rec: StatementRecord,
  name: string,
  batch: readonly InMsg[],
): Promise<void> {
  let backend: Backend;
  try {
    backend = await pool.acquire(s.services.config.acquireTimeoutMs, s.passThrough);
  } catch (e) {
    s.sendError(e);
    s.out.push(s.readyFrame());
    s.out.flush();
    return;
  }
  pool.makeLane(backend, s.services.config.pipelineDepth);
  return send(s, pool, backend, rec, name, batch);
}

/** Sends the batch on `backend` behind whatever is pipelined there, preparing it if need be. */
function send(
  s: Session,
  pool: Pool,
  backend: Backend,
  rec: StatementRecord,
  name: string,
  batch: readonly InMsg[],
): Promise<void> {
  if (backend.inFlight > 1) s.services.metrics.pipelined();
  const messages: Buffer[] = [];
  const expect: Expectation[] = [];
  replaySettings(s, backend, messages, expect);
  let parsing: string | undefined;
  if (!backend.prepared.has(name)) {
    // Nobody else uses the name on this backend until its Parse is answered (Pool.lend).
    messages.push(rec.parseFrame(name));
    expect.push({ t: 'one', forward: false, unprepare: name });
    backend.prepared.add(name);
    backend.parsing.add(name);
    parsing = name;
  }
  messages.push(rewriteBindStatement(batch[0]!.body, name));
  expect.push(EXPECT_ONE);
  pushExecutionTail(batch, messages, expect);
  return runShared(s, backend, pool, messages, expect, parsing);
}
