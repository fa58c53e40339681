// The end of a transaction the router holds on several nodes (DESIGN.md section 5). A transaction
// that wrote on at most one node commits with plain COMMITs (read-only parts first) and never
// touches the coordinator; one that wrote on several commits through @tessera/twopc: PREPARE on
// every writer, Decide at the coordinator, COMMIT PREPARED. Every backend goes back to its pool.
import { Writer, writeQuery } from '@tessera/pg-wire';
import {
  CommitUnfinishedError,
  InDoubtError,
  TwoPhaseError,
  commitAcrossNodes,
  finishCommit,
  newTxid,
  sqlParticipant,
  type PendingCommit,
} from '@tessera/twopc';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError, type Backend } from '../pool/backend.js';
import { HeldOut } from '../session/client-out.js';
import { faultHook } from './fault-hook.js';
import { drop, settle } from './backends.js';
import { run1 } from './run.js';
import type { Session } from '../session/session.js';

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();

interface Part {
  readonly node: string;
  readonly written: boolean;
  readonly backend: Backend | undefined;
}

/**
 * Runs one statement of the router's own on a held backend; throws the node's error unchanged
 * (BackendError: the client sees the node's SQLSTATE and fields, e.g. 23505 from a deferred
 * unique check at PREPARE), or 08006 if the connection is gone.
 */
export async function runOwn(s: Session, p: Part, sql: string): Promise<void> {
  const b = p.backend;
  // After the session closed (or dropped it) the backend may serve another client already.
  if (b === undefined || b.dead || s.closed || s.held.get(p.node)?.backend !== b)
    throw new RouterError(
      SQLSTATE.connectionFailure,
      `the connection to node "${p.node}" of this transaction was lost`,
    );
  const r = await run1(s, b, [q(sql)], [{ t: 'quiet' }], false, new HeldOut(false));
  if (r.quietError !== undefined) throw new BackendError(r.quietError);
}

/** Settles every run, then throws the first failure: no backend is left mid-answer. */
async function allOf(runs: Promise<unknown>[]): Promise<void> {
  const done = await Promise.allSettled(runs);
  for (const r of done) if (r.status === 'rejected') throw r.reason;
}

/**
 * COMMIT or ROLLBACK of the session's transaction on every node it holds. Resolves with the tag
 * the client sees (a failed transaction's COMMIT is a ROLLBACK, as in Postgres); throws the
 * error the commit failed with, everything then rolled back (or, for 08007, left to recovery).
 * Either way the transaction is over and its backends are released.
 */
export async function finishTransaction(
  s: Session,
  action: 'commit' | 'rollback',
): Promise<'COMMIT' | 'ROLLBACK'> {
  const txn = s.txn;
  const commit = action === 'commit' && s.status() !== 'E';
  const nodes = [...txn.parts()].map(([node]) => node);
  let committed = false;
  try {
    if (txn.phase !== 'one' && txn.phase !== 'cross') {
      committed = commit;
      return commit ? 'COMMIT' : 'ROLLBACK';
    }
    const parts: Part[] = [...txn.parts()].map(([node, t]) => ({
      node,
      written: t.written,
      backend: s.held.get(node)?.backend,
    }));
    if (!commit) {
      await Promise.allSettled(parts.map((p) => runOwn(s, p, 'ROLLBACK')));
      return 'ROLLBACK';
    }
    // Every part must still be inside its transaction: a PREPARE or COMMIT outside one is only a
    // warning in Postgres, and would pass a lost part off as committed.
    const gone = parts.find(
      (p) => p.backend === undefined || p.backend.dead || p.backend.status !== 'T',
    );
    if (gone !== undefined) {
      await Promise.allSettled(parts.map((p) => runOwn(s, p, 'ROLLBACK')));
      throw new RouterError(
        SQLSTATE.connectionFailure,
        `the transaction's part on node "${gone.node}" was lost before COMMIT; it was rolled back everywhere`,
      );
    }
    const readers = parts.filter((p) => !p.written);
    const writers = parts.filter((p) => p.written);
    try {
      // Read-only parts first: if one cannot commit, nothing was written anywhere yet.
      await allOf(readers.map((p) => runOwn(s, p, 'COMMIT')));
    } catch (e) {
      await Promise.allSettled(writers.map((p) => runOwn(s, p, 'ROLLBACK')));
      throw e;
    }
    if (writers.length <= 1) {
      for (const p of writers) await runOwn(s, p, 'COMMIT');
    } else {
      await commitWriters(s, writers);
    }
    committed = true;
    return 'COMMIT';
  } finally {
    const saved = txn.end();
    if (!committed && saved !== undefined) s.settings.restore(saved);
    for (const node of nodes) {
      const h = s.held.get(node);
      if (h === undefined) continue;
      // A backend still inside a transaction (its ROLLBACK failed) must not serve anyone else.
      if (h.backend.status === 'I' && !h.backend.dead) settle(s, node);
      else drop(s, node);
    }
  }
}

/** Two-phase commit of the parts that wrote. */
async function commitWriters(s: Session, writers: readonly Part[]): Promise<void> {
  const { services } = s;
  const txid = newTxid(services.routerId);
  const participants = writers.map((p) => sqlParticipant(p.node, (sql) => runOwn(s, p, sql)));
  try {
    const outcome = await commitAcrossNodes(txid, participants, services.decisions, {
      clusterUid: s.epoch().snapshot.clusterUid,
      faultHook, // undefined unless TESSERA_FAULT_2PC is set (tests only: fault-hook.ts)
    });
    if (outcome.pending.length > 0) {
      // Decided, but invisible on those nodes until they run COMMIT PREPARED: COMMIT is not
      // answered before they did (a later read would miss the write), nor forever (08007).
      services.log.warn(
        { txid, pending: outcome.pending.map((p) => p.node) },
        'committed; some nodes did not confirm COMMIT PREPARED, retrying before COMMIT is answered',
      );
      await finishCommit(txid, outcome.pending, (p) => recommit(s, p), {
        timeoutMs: services.config.commitFinishTimeoutMs,
      });
    }
    services.metrics.twoPhase('committed');
  } catch (e) {
    if (e instanceof TwoPhaseError) {
      const outcome =
        e instanceof InDoubtError
          ? 'in_doubt'
          : e instanceof CommitUnfinishedError
            ? 'unfinished'
            : 'aborted';
      services.metrics.twoPhase(outcome);
      services.log.warn({ txid, err: e.message }, `commit ${outcome.replace('_', ' ')}`);
      // Typed inside, converted at the edge: the client sees 08007 or 40001 and the sentence.
      throw new RouterError(e.sqlstate, e.message);
    }
    services.metrics.twoPhase('prepare_failed');
    throw e;
  }
}

/**
 * `COMMIT PREPARED` of a pending part on a fresh backend of the node's pool, by the current
 * catalog (a failover may have moved the node); rejects with the node's error (42704 once the
 * gid is gone, which finishCommit counts as committed).
 */
async function recommit(s: Session, p: PendingCommit): Promise<void> {
  const { services } = s;
  const pool = services.pools.pool(s.epoch().snapshot, p.node, s.database, s.user);
  const b = await pool.acquire(services.config.acquireTimeoutMs, s.passThrough);
  try {
    const r = await run1(
      s,
      b,
      [q(`COMMIT PREPARED '${p.gid}'`)],
      [{ t: 'quiet' }],
      false,
      new HeldOut(false),
    );
    if (r.quietError !== undefined) throw new BackendError(r.quietError);
  } finally {
    if (!b.dead && b.status !== 'I') b.destroy('left inside a transaction by COMMIT PREPARED');
    pool.release(b);
  }
}
