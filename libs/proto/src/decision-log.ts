// A decision log over the coordinator's TxnService.Decide: the gRPC side of @tessera/twopc's
// DecisionLog seam, which it matches structurally. It lives here, not in twopc, because twopc is a
// pure library (no gRPC; docs/architecture.md, "Layering"), and proto does not import twopc so that
// twopc's tests can use this against a real coordinator without a cycle between the two projects.
// Deciding is idempotent (the first decision for a txid wins and every later call returns it), so
// a call that failed may be repeated safely, on the same coordinator or on a standby that took over.
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, RpcError } from './errors.js';
import type { Client } from './client.js';
import { Decision, type TxnService } from './gen/tessera/v1/ops_pb.js';

/** A commit decision as @tessera/twopc spells it. */
export type DecisionText = 'commit' | 'abort';

/** The shape of @tessera/twopc's DecisionLog. */
export interface GrpcDecisionLog {
  /** Logs `decision` unless one is logged already; resolves with the logged one, once durable. */
  decide(txid: string, decision: DecisionText, participants: string[]): Promise<DecisionText>;
}

export interface GrpcDecisionLogOptions {
  /** Deadline of each Decide call. Default 5 s. */
  callDeadlineMs?: number;
  /**
   * Keep retrying UNAVAILABLE / DEADLINE_EXCEEDED for this long, moving to the next client each
   * time (a standby becomes active within a few poll intervals). Default 0: one attempt each.
   */
  retryForMs?: number;
  /** Pause between attempts. Default 100 ms. */
  retryDelayMs?: number;
}

type Decider = Pick<Client<typeof TxnService>, 'decide'>;

/** `clients`: one per coordinator address, active first if known. */
export function grpcDecisionLog(
  clients: Decider | readonly Decider[],
  opts: GrpcDecisionLogOptions = {},
): GrpcDecisionLog {
  const list: readonly Decider[] = Array.isArray(clients) ? clients : [clients as Decider];
  if (list.length === 0) throw new TypeError('grpcDecisionLog needs at least one client');
  const deadlineMs = opts.callDeadlineMs ?? 5_000;
  const retryForMs = opts.retryForMs ?? 0;
  const delayMs = opts.retryDelayMs ?? 100;
  let next = 0;
  return {
    async decide(txid, decision, participants) {
      const until = Date.now() + retryForMs;
      for (let attempt = 0; ; attempt++) {
        const client = list[next % list.length] as Decider;
        try {
          const res = await client.decide(
            { txid, decision: toDecision(decision), participants },
            { deadlineMs },
          );
          return fromDecision(res.decision);
        } catch (e) {
          const retriable =
            e instanceof RpcError &&
            (e.code === Code.UNAVAILABLE || e.code === Code.DEADLINE_EXCEEDED);
          next++;
          // Each client gets one try even without a retry window.
          if (!retriable || (Date.now() >= until && attempt + 1 >= list.length)) throw e;
          if (Date.now() < until) await sleep(delayMs);
        }
      }
    },
  };
}

function toDecision(d: DecisionText): Decision {
  return d === 'commit' ? Decision.COMMIT : Decision.ABORT;
}

function fromDecision(d: Decision): DecisionText {
  switch (d) {
    case Decision.COMMIT:
      return 'commit';
    case Decision.ABORT:
      return 'abort';
    case Decision.UNSPECIFIED:
      throw new Error('the coordinator answered Decide without a decision');
    default:
      throw new Error(`the coordinator answered Decide with unknown decision ${String(d)}`);
  }
}
