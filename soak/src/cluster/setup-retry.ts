// Setup steps (declaring the schema through the coordinator, CREATE TABLE and the accounts
// through a router) on a loaded machine: the active coordinator may step down while they run (its
// leader-lock check times out behind a slow transaction) and the VIP then cuts the channel, or a
// router may not answer in time. Such a step is retried until a deadline; a retry that finds its
// earlier attempt's effect (ALREADY_EXISTS, 42P07, 23505) counts as done.
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, RpcError } from '@tessera/proto';

export type SetupOutcome = 'retry' | 'done-before' | 'fatal';

/** What to do with a setup step's error, on its `attempt`-th try (1 = the first). */
export function classifySetupError(e: unknown, attempt: number): SetupOutcome {
  if (e instanceof RpcError) {
    switch (e.code) {
      case Code.UNAVAILABLE:
      case Code.DEADLINE_EXCEEDED:
      case Code.CANCELLED:
      case Code.ABORTED:
      case Code.UNKNOWN:
      case Code.INTERNAL:
        return 'retry';
      case Code.ALREADY_EXISTS:
        return attempt > 1 ? 'done-before' : 'fatal';
      default:
        return 'fatal';
    }
  }
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    // 42P07 duplicate table, 23505 unique violation: an earlier attempt did it.
    if (code === '42P07' || code === '23505') return attempt > 1 ? 'done-before' : 'fatal';
    // Connection exceptions, shutdowns, the router's "cannot reach" answers, serialization.
    if (/^(08|57P|40|53)/.test(code)) return 'retry';
    return 'fatal';
  }
  // A socket error, a timeout, "Connection terminated": no SQLSTATE, no status.
  return 'retry';
}

export interface RetryOptions {
  what: string;
  timeoutMs: number;
  log?: ((line: string) => void) | undefined;
  /** Run before each retry (e.g. wait for an active coordinator). */
  beforeRetry?: (() => Promise<unknown>) | undefined;
  /** Overrides classifySetupError (the final probe retries every error until its deadline). */
  classify?: ((e: unknown, attempt: number) => SetupOutcome) | undefined;
}

/** For steps that only read: every error is worth another try until the deadline. */
export const retryEveryError = (): SetupOutcome => 'retry';

/** Runs `step` until it succeeds, its error is fatal, or `timeoutMs` has passed. */
export async function retrySetup<T>(
  step: () => Promise<T>,
  o: RetryOptions,
): Promise<T | undefined> {
  const deadline = Date.now() + o.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (e) {
      const what = (o.classify ?? classifySetupError)(e, attempt);
      if (what === 'done-before') return undefined;
      if (what === 'fatal' || Date.now() >= deadline) throw e;
      o.log?.(`${o.what}: ${(e as Error).message}; retrying (attempt ${attempt + 1})`);
      await sleep(Math.min(2_000, 250 * attempt));
      await o.beforeRetry?.().catch(() => undefined);
    }
  }
}
