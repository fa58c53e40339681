// A held statement waits here: parked, never an error, until a later catalog epoch arrives (or,
// held for the router's lease, until the lease is renewed), then admitted again against the
// epoch's snapshot (it may run, be refused, or be held again).
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
      const wait =
        decision.reason.kind === 'lease'
          ? leaseRenewed(s, decision.epoch, Math.max(0, leftMs))
          : s.services.nextEpoch(decision.epoch.snapshot.epoch, Math.max(0, leftMs));
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

/** The current epoch once the lease holds again (undefined after `timeoutMs` or a cancel). */
function leaseRenewed(
  s: Session,
  held: Epoch,
  timeoutMs: number,
): { readonly epoch: Promise<Epoch | undefined>; cancel(): void } {
  const w = s.services.lease.whenValid(timeoutMs);
  return {
    epoch: w.valid.then((ok) => (ok ? (s.services.epoch() ?? held) : undefined)),
    cancel: w.cancel,
  };
}
