// A held statement waits here: parked, never an error, until a later catalog epoch arrives,
// then admitted again against that epoch's snapshot (it may run, be refused, or be held again).
// Bounded by --hold-timeout-ms, after which it fails with 40001 (retryable) naming the range or
// node; a CancelRequest ends the wait with 57014, as it would end a running statement.
import type { Decision } from '../admit/decision.js';
import { holdTimeoutMessage } from '../admit/decision.js';
import type { Epoch } from '../catalog/epochs.js';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Session } from '../session/session.js';

export async function waitWhileHeld(
  s: Session,
  held: Decision<Epoch> & { kind: 'held' },
  admitAgain: (epoch: Epoch) => Decision<Epoch>,
): Promise<Decision<Epoch>> {
  const reason = held.reason;
  const startedMs = performance.now();
  const timeoutMs = s.services.config.holdTimeoutMs;
  let decision: Decision<Epoch> = held;
  let cancelled = false;
  try {
    while (decision.kind === 'held') {
      const leftMs = timeoutMs - (performance.now() - startedMs);
      const wait = s.services.nextEpoch(decision.epoch.snapshot.epoch, Math.max(0, leftMs));
      s.cancelWait = () => {
        cancelled = true;
        wait.cancel();
      };
      const next = leftMs > 0 ? await wait.epoch : undefined;
      s.cancelWait = undefined;
      if (cancelled || s.closed)
        throw new RouterError(SQLSTATE.queryCanceled, 'canceling statement due to user request');
      if (next === undefined)
        throw new RouterError(
          SQLSTATE.serializationFailure,
          holdTimeoutMessage(decision.reason, timeoutMs),
        );
      decision = admitAgain(next);
    }
  } finally {
    s.cancelWait = undefined;
    s.services.metrics.held(reason.kind, (performance.now() - startedMs) / 1000);
  }
  return decision;
}
