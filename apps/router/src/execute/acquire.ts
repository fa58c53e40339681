// How a statement gets its node's backend, chosen by one function (acquisition) among three
// policies, and taking it: `held` (the session holds one for the node), `lane` (an autocommit
// read shares a backend other clients' reads are pipelined on, Pool.lend), `own` (one from the
// pool for this statement or transaction). Synchronous, no promise, whenever the backend is held
// or one is idle or lendable: only waiting for the pool returns a promise.
//
// Only statements that cannot wait on another session are pipelined (one stuck behind a lock would
// hold up the statements queued after it): plain SELECTs with no locking clause, no data-modifying
// CTE and no function outside the read-only list of routing/writes.ts, prepared under a name, in
// the batch shape drivers send for one (Bind, [Describe,] Execute, Sync), outside a transaction.
import type { Snapshot } from '@tessera/keyspace';
import type { Analysis } from '@tessera/sql';
import type { Backend } from '../pool/backend.js';
import type { Pool } from '../pool/pool.js';
import { isWrite } from '../routing/writes.js';
import type { Session } from '../session/session.js';
import { acquireFor, engageInto, engageNow, poolFor, replaySettings } from './backends.js';
import type { Policy, Round } from './round.js';

/** Whether `a` may share a backend with other sessions' reads (see above). */
export function pipelinableRead(a: Analysis): boolean {
  return a.kind === 'select' && !isWrite(a);
}

/**
 * The policy for a statement on `node`. `laneName`: the server name of a prepared read in the
 * batch shape that may share (undefined when it may not).
 */
export function acquisition(s: Session, node: string, laneName: string | undefined): Policy {
  const h = s.held.get(node);
  if (h !== undefined && !h.backend.dead) return 'held';
  if (laneName === undefined || laneName === '') return 'own';
  const config = s.services.config;
  if (config.pipelineDepth <= 1 || config.poolMode !== 'transaction') return 'own';
  if (s.txn.phase !== 'idle' || s.cycle !== undefined || s.held.size > 0) return 'own';
  return 'lane';
}

/**
 * Takes the backend for `node` by `policy` into `round`, with what must run before the client's
 * messages (settings replay; with `begin`, the deferred BEGIN or the transaction so far).
 */
export function acquire(
  s: Session,
  round: Round,
  node: string,
  snapshot: Snapshot,
  policy: Policy,
  begin: boolean,
  laneName: string | undefined,
): Backend | Promise<Backend> {
  if (policy === 'lane') return lane(s, round, node, snapshot, laneName!);
  const { messages, expect } = round;
  const got =
    policy === 'held'
      ? engageNow(s, node, snapshot, begin, messages, expect)!
      : engageInto(s, node, snapshot, begin, messages, expect);
  if (got instanceof Promise) return got.then((b) => into(round, node, b, policy));
  return into(round, node, got, policy);
}

function into(round: Round, node: string, b: Backend, policy: Policy): Backend {
  round.node = node;
  round.backend = b;
  round.policy = policy;
  return b;
}

/**
 * A lane: the least busy one open with the statement prepared and the same settings, else an idle
 * backend made a lane, else one waited for in turn (Pool.lend, Pool.makeLane).
 */
function lane(
  s: Session,
  round: Round,
  node: string,
  snapshot: Snapshot,
  name: string,
): Backend | Promise<Backend> {
  const pool = poolFor(s, snapshot, node);
  const depth = s.services.config.pipelineDepth;
  const lent = pool.lend(depth, name, s.settings.key());
  if (lent !== undefined) return intoLane(s, round, node, pool, lent);
  return acquireFor(s, pool).then((b) => {
    pool.makeLane(b, depth);
    return intoLane(s, round, node, pool, b);
  });
}

function intoLane(s: Session, round: Round, node: string, pool: Pool, b: Backend): Backend {
  if (b.inFlight > 1) s.services.metrics.pipelined();
  into(round, node, b, 'lane');
  round.pool = pool;
  replaySettings(s, b, node, round.messages, round.expect);
  return b;
}
