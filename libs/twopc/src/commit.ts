// The commit protocol for a transaction that wrote on several nodes (DESIGN.md section 5):
// PREPARE everywhere in parallel, log the decision at the coordinator, COMMIT PREPARED everywhere
// in parallel. Whatever happens between those steps is left in a state the coordinator's recovery
// loop can finish: prepared transactions whose fate the decision log (or its absence) settles.
import { performance } from 'node:perf_hooks';
import { CommitAbortedError, InDoubtError } from './errors.js';
import { goneAfterCommit } from './finish.js';
import { gidFor } from './gid.js';
import type { DecisionLog, DecisionText, FaultPoint, Participant } from './participant.js';

export interface CommitOptions {
  /** The catalog's cluster uid: it goes into every gid, so recovery finds only its own. */
  clusterUid: string;
  /**
   * Tests only: runs at each FaultPoint. A hook that throws (or kills the process) abandons the
   * commit right there, as a crash would: nothing is cleaned up, the error propagates.
   */
  faultHook?: (point: FaultPoint) => void | Promise<void>;
  /**
   * If the PREPAREs took longer than this, abort instead of committing. The coordinator deletes
   * decision rows an hour after every gid is gone; a commit decided after its abort row was
   * deleted would commit half a transaction, so no commit may be decided that late. Default 60 s.
   */
  decideDeadlineMs?: number;
}

export interface PendingCommit {
  node: string;
  gid: string;
  error: unknown;
}

/** A committed transaction. `pending` nodes did not confirm COMMIT PREPARED; recovery will. */
export interface CommitOutcome {
  txid: string;
  participants: string[];
  committed: string[];
  pending: PendingCommit[];
}

export const DEFAULT_DECIDE_DEADLINE_MS = 60_000;

/** A fault hook's own failure, told apart from a node's. */
class Abandoned {
  constructor(readonly error: unknown) {}
}

/**
 * Commits one transaction on every participant, or on none. Resolves when the commit decision is
 * logged (the outcome is then certain, even if some COMMIT PREPARED failed: see `pending`).
 * Rejects with the failing node's own error if a PREPARE failed (everything rolled back), with
 * InDoubtError (08007) if the decision could not be logged (nothing rolled back; recovery decides),
 * or with CommitAbortedError (40001) if an abort was logged first (everything rolled back).
 */
export async function commitAcrossNodes(
  txid: string,
  participants: readonly Participant[],
  log: DecisionLog,
  opts: CommitOptions,
): Promise<CommitOutcome> {
  const started = performance.now();
  const nodes = participants.map((p) => p.node);
  if (nodes.length === 0) throw new TypeError(`transaction ${txid} has no participants to commit`);
  if (new Set(nodes).size !== nodes.length)
    throw new TypeError(
      `a node appears twice among the participants of ${txid}: ${nodes.join(', ')}`,
    );
  // Every gid is built (and checked) before any side effect.
  const gids = participants.map((p) => gidFor(opts.clusterUid, txid, p.node));
  const gid = (i: number): string => gids[i] as string;
  const hook = opts.faultHook;
  const fire = async (point: FaultPoint): Promise<void> => {
    if (!hook) return;
    try {
      await hook(point);
    } catch (e) {
      throw new Abandoned(e);
    }
  };
  const rethrowAbandoned = (results: PromiseSettledResult<unknown>[]): void => {
    for (const r of results)
      if (r.status === 'rejected' && r.reason instanceof Abandoned) throw r.reason.error;
  };
  const unwrap = async (step: () => Promise<void>): Promise<void> => {
    try {
      await step();
    } catch (e) {
      throw e instanceof Abandoned ? e.error : e;
    }
  };

  await unwrap(() => fire('before-prepare'));
  const prepares = await Promise.allSettled(
    participants.map(async (p, i) => {
      await p.prepare(gid(i));
      await fire(`after-prepare:${p.node}`);
    }),
  );
  rethrowAbandoned(prepares);
  // Rejections here are the nodes' own (a hook failure was rethrown above), so fulfilled = prepared.
  const failed = prepares.findIndex((r) => r.status === 'rejected');
  if (failed >= 0) {
    await Promise.all([
      ...participants.map((p, i) =>
        (prepares[i]?.status === 'fulfilled' ? p.rollbackPrepared(gid(i)) : p.rollback()).catch(
          () => undefined, // a node we cannot reach: recovery rolls its prepared txn back
        ),
      ),
      // Logged so recovery rolls back at once anything whose PREPARE we could not see finish
      // (a connection lost mid-PREPARE), instead of waiting out the grace period.
      log.decide(txid, 'abort', nodes).catch(() => undefined),
    ]);
    throw (prepares[failed] as PromiseRejectedResult).reason;
  }

  const rollBackAll = (): Promise<unknown> =>
    Promise.all(participants.map((p, i) => p.rollbackPrepared(gid(i)).catch(() => undefined)));
  const elapsedMs = performance.now() - started;
  const deadlineMs = opts.decideDeadlineMs ?? DEFAULT_DECIDE_DEADLINE_MS;
  const wanted: DecisionText = elapsedMs > deadlineMs ? 'abort' : 'commit';

  let decision: DecisionText;
  try {
    decision = checkDecision(await log.decide(txid, wanted, nodes));
  } catch (e) {
    throw new InDoubtError(txid, nodes, e);
  }
  await unwrap(() => fire('after-decision'));

  switch (decision) {
    case 'abort':
      await rollBackAll();
      throw new CommitAbortedError(
        txid,
        wanted === 'abort'
          ? `preparing took ${Math.round(elapsedMs)} ms, longer than the ${deadlineMs} ms a commit may be decided in`
          : 'the coordinator had already logged an abort for it (recovery or an operator gave up waiting for it)',
      );
    case 'commit':
      break;
    default:
      return assertNever(decision);
  }

  const commits = await Promise.allSettled(
    participants.map(async (p, i) => {
      // Gone: the coordinator's recovery finished it first, by the same decision.
      await p.commitPrepared(gid(i)).catch((e: unknown) => {
        if (!goneAfterCommit(e)) throw e;
      });
      await fire(`after-commit:${p.node}`);
    }),
  );
  rethrowAbandoned(commits);
  const outcome: CommitOutcome = { txid, participants: nodes, committed: [], pending: [] };
  commits.forEach((r, i) => {
    const node = nodes[i] as string;
    if (r.status === 'fulfilled') outcome.committed.push(node);
    else outcome.pending.push({ node, gid: gid(i), error: r.reason });
  });
  await unwrap(() => fire('after-all'));
  return outcome;
}

/** The log's answer, checked: anything else means we do not know what was logged. */
function checkDecision(d: unknown): DecisionText {
  if (d === 'commit' || d === 'abort') return d;
  throw new Error(`the decision log answered ${String(d)}, not commit or abort`);
}

function assertNever(x: never): never {
  throw new Error(`unexpected decision ${String(x)}`);
}
