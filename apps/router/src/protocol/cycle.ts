// Extended-protocol cycles left open at a Flush: a batch that ends at a Flush (say Parse and
// Describe) keeps its backend, and the next batch goes on there, until a Sync ends the cycle.
import {
  FrontendCode,
  SYNC,
  bindPortalName,
  decodeDescribe,
  decodeExecute,
} from '@tessera/pg-wire';
import type { Backend } from '../pool/backend.js';
import type { Round } from '../execute/round.js';
import type { InMsg } from '../session/client-in.js';
import { settle } from '../execute/backends.js';
import { run1 } from '../execute/run.js';
import type { Session } from '../session/session.js';

/** The backend of the session's open cycle, if there is one and it is still alive. */
export function openCycleBackend(s: Session): Backend | undefined {
  if (s.cycle === undefined) return undefined;
  const h = s.held.get(s.cycle);
  return h && !h.backend.dead ? h.backend : undefined;
}

/**
 * Ends the open cycle with a Sync of the router's own, for a batch whose statements go elsewhere
 * and use none of its portals (in a transaction block that Sync commits nothing; the other node
 * joins the transaction).
 */
export async function closeOpenCycle(s: Session, backend: Backend): Promise<void> {
  const node = s.cycle!;
  try {
    await run1(s, backend, [SYNC], [{ t: 'quiet' }]);
  } catch {
    // Lost: the session already forgot it.
  }
  s.cycle = undefined;
  for (const e of s.cycleEpochs.splice(0)) e.leave();
  settle(s, node);
}

/**
 * Whether the open cycle's backend (the round's) is not needed: this batch's statements go
 * elsewhere and use no portal of it, and the cycle ran no statement (Parse, Describe, Flush,
 * then Bind/Execute/Sync elsewhere), so the cycle ends first. One that ran statements stays:
 * the batch then crosses nodes, and those join its transaction (crossing.ts).
 */
export function cycleNotNeeded(
  s: Session,
  round: Round,
  batch: readonly InMsg[],
  preferred: () => string | undefined,
): boolean {
  if (round.backend === undefined || round.queued || s.cycleEpochs.length > 0) return false;
  const elsewhere = preferred();
  return elsewhere !== undefined && elsewhere !== round.node && !usesOpenPortal(batch);
}

/** Whether the batch uses a portal bound before it (Execute/Describe/Close of a portal it did not Bind). */
export function usesOpenPortal(batch: readonly InMsg[]): boolean {
  const bound = new Set<string>();
  for (const m of batch) {
    if (m.code === FrontendCode.Bind) bound.add(bindPortalName(m.body));
    else if (m.code === FrontendCode.Execute) {
      if (!bound.has(decodeExecute(m.body).portal)) return true;
    } else if (m.code === FrontendCode.Describe || m.code === FrontendCode.Close) {
      const d = decodeDescribe(m.body);
      if (d.target === 'P' && !bound.has(d.name)) return true;
    }
  }
  return false;
}
