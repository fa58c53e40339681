// Extended-protocol cycles left open at a Flush: a batch that ends at a Flush (say Parse and
// Describe) keeps its backend, and the next batch goes on there, until a Sync ends the cycle.
import { SYNC, decodeDescribe, decodeExecute } from '@tessera/pg-wire';
import type { Backend } from '../pool/backend.js';
import type { InMsg } from './client-in.js';
import { settle } from './engage.js';
import { run1 } from './run.js';
import type { Session } from './session.js';

/** The backend of the session's open cycle, if there is one and it is still alive. */
export function openCycleBackend(s: Session): Backend | undefined {
  if (!s.cycleOpen || s.cycleNode === undefined) return undefined;
  const h = s.held.get(s.cycleNode);
  return h && !h.backend.dead ? h.backend : undefined;
}

/**
 * Ends the open cycle on `node` with a Sync of the router's own, for a batch whose key lives
 * elsewhere (in a transaction block that Sync commits nothing; the other node joins the
 * transaction).
 */
export async function closeOpenCycle(s: Session, backend: Backend, node: string): Promise<void> {
  try {
    await run1(s, backend, [SYNC], [{ t: 'quiet' }]);
  } catch {
    // Lost: the session already forgot it.
  }
  s.cycleOpen = false;
  s.cycleNode = undefined;
  settle(s, node);
}

/** Whether the batch uses a portal bound before it (Execute/Describe/Close of a portal it did not Bind). */
export function usesOpenPortal(batch: readonly InMsg[]): boolean {
  const bound = new Set<string>();
  for (const m of batch) {
    if (m.code === 0x42) bound.add(m.body.toString('utf8', 0, m.body.indexOf(0)));
    else if (m.code === 0x45) {
      if (!bound.has(decodeExecute(m.body).portal)) return true;
    } else if (m.code === 0x44 || m.code === 0x43) {
      const d = decodeDescribe(m.body);
      if (d.target === 'P' && !bound.has(d.name)) return true;
    }
  }
  return false;
}
