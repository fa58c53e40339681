// The Execute of a statement the router runs on several nodes itself (a portal its Bind kept):
// what the batch queued before it goes first, and a write among other statements of its batch
// runs in the batch's transaction across nodes (crossing.ts); then the executor runs it under
// the decision its Bind was admitted with.
import { FrontendCode } from '@tessera/pg-wire';
import { execute } from '../execute/executor.js';
import type { InMsg } from '../session/client-in.js';
import type { RouterPortal } from '../statement/portal.js';
import type { Statement } from '../statement/statement.js';
import { crossOver, type CrossingBatch } from './crossing.js';

type SeveralPortal = RouterPortal & { kind: 'several' };

/** What running a router portal needs of its batch (extended.ts). */
export interface PortalBatch extends CrossingBatch {
  readonly batch: readonly InMsg[];
  /** Index of the Execute being handled. */
  readonly at: number;
  readonly endsWithSync: boolean;
}

export function runRouterPortal(
  b: PortalBatch,
  p: SeveralPortal,
  maxRows: number,
): Promise<void> | undefined {
  // Its answer goes straight to the client: what the batch queued for a node goes first.
  const before = beforeSeveral(b, p);
  if (before !== undefined) return before.then(() => run(b, p, maxRows));
  return run(b, p, maxRows);
}

/**
 * What runs before a statement on several nodes: a write that is not the only statement of its
 * batch (or whose batch ends at a Flush), or anything after statements queued for a node, joins
 * the batch's transaction across nodes, after the statements queued before it (a read across
 * nodes then reads inside that transaction, scatter/scatter.ts).
 */
function beforeSeveral(b: PortalBatch, p: SeveralPortal): Promise<void> | undefined {
  const scatter = p.decision.route.kind === 'scatter';
  if (b.round.backend === undefined) {
    // In a transaction it joins it; alone in its batch it is its own implicit transaction.
    if (b.s.txn.inBlock || scatter) return undefined;
    if (b.endsWithSync && !executesAfter(b)) return undefined;
  }
  return crossOver(b);
}

function executesAfter(b: PortalBatch): boolean {
  for (let k = b.at + 1; k < b.batch.length; k++)
    if (b.batch[k]!.code === FrontendCode.Execute) return true;
  return false;
}

function run(b: PortalBatch, p: SeveralPortal, maxRows: number): Promise<void> | undefined {
  const stmt: Statement = {
    analysis: p.analysis,
    params: undefined,
    protocol: 'extended',
    purpose: 'run',
  };
  const ran = execute(b.s, stmt, p.decision, { kind: 'portal', portal: p, maxRows });
  if (ran === undefined) {
    p.describe = false;
    return undefined;
  }
  return ran.then(() => void (p.describe = false));
}
