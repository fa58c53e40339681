// Finishing a commit whose COMMIT PREPARED did not reach every node (DESIGN.md section 5). Once
// the decision is logged the transaction is committed, but each node's part stays invisible until
// that node runs COMMIT PREPARED. A COMMIT acknowledged before then lets the client, or anyone
// after it, read a state without the write, which one Postgres never does (the soak found it:
// docs/soak.md). So the caller retries COMMIT PREPARED on a fresh connection until every node
// confirms it, or its gid is gone (recovery, or our first attempt, already finished it), and only
// then acknowledges. Past the deadline it answers 08007: the client cannot rely on having seen
// the commit take effect everywhere, and the coordinator's recovery finishes it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { PendingCommit } from './commit.js';
import { CommitUnfinishedError } from './errors.js';

/** Runs `COMMIT PREPARED` of `p.gid` on a fresh connection to `p.node`; rejects with its error. */
export type Recommit = (p: PendingCommit) => Promise<void>;

export interface FinishOptions {
  /** Give up (CommitUnfinishedError, 08007) once this much time has passed. */
  timeoutMs: number;
  /** First pause between attempts on one node, doubled up to `maxDelayMs`. Default 100. */
  firstDelayMs?: number;
  /** Default 1000. */
  maxDelayMs?: number;
}

/** SQLSTATE 42704: "prepared transaction with identifier ... does not exist". */
const UNDEFINED_OBJECT = '42704';

/** The SQLSTATE of a node's error as the router's and pg's errors carry it, if any. */
function sqlstateOf(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const o = e as { code?: unknown; sqlstate?: unknown };
  if (typeof o.code === 'string') return o.code;
  if (typeof o.sqlstate === 'string') return o.sqlstate;
  return undefined;
}

/**
 * Whether COMMIT PREPARED failed because the gid is gone: after a logged commit that means it is
 * committed (recovery follows the decision, and may get to a node first).
 */
export function goneAfterCommit(e: unknown): boolean {
  return sqlstateOf(e) === UNDEFINED_OBJECT;
}

/**
 * Resolves once every pending part is committed on its node (a gid that no longer exists is
 * committed: the decision was commit, and recovery only ever follows the decision). Rejects with
 * CommitUnfinishedError when `timeoutMs` passes first.
 */
export async function finishCommit(
  txid: string,
  pending: readonly PendingCommit[],
  recommit: Recommit,
  opts: FinishOptions,
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const first = opts.firstDelayMs ?? 100;
  const max = opts.maxDelayMs ?? 1000;
  const unfinished: PendingCommit[] = [];
  await Promise.all(
    pending.map(async (p) => {
      let last: unknown = p.error;
      for (let delay = first; ; delay = Math.min(delay * 2, max)) {
        try {
          await recommit(p);
          return;
        } catch (e) {
          if (goneAfterCommit(e)) return;
          last = e;
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          unfinished.push({ ...p, error: last });
          return;
        }
        await sleep(Math.min(delay, left));
      }
    }),
  );
  if (unfinished.length > 0) throw new CommitUnfinishedError(txid, unfinished, opts.timeoutMs);
}
