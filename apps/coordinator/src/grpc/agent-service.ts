// AgentService: each agent streams a report every second; the coordinator keeps the latest one
// per instance, hands it to the failover engine (which answers a primary's report with a lease
// renewal), and sends the engine's directives back on the same stream. GetHealth shows it all.
import * as grpc from '@grpc/grpc-js';
import {
  ACTIVE_COORDINATOR_KEY,
  Code,
  RpcError,
  create,
  AgentStatusSchema,
  type AgentDirective,
  type AgentService,
  type ServiceImpl,
} from '@tessera/proto';
import type { DirectiveSink } from '../agent-reports.js';
import { unavailable } from '../errors.js';
import type { ServiceDeps } from './deps.js';

/** An agent stream's outgoing directives, queued until the stream takes them. */
class Outbox implements DirectiveSink {
  private readonly queue: AgentDirective[] = [];
  private wake: (() => void) | undefined;
  private dismissed: Error | undefined;
  closed = false;

  push(d: AgentDirective): void {
    if (this.closed) return;
    this.queue.push(d);
    this.notify();
  }

  close(): void {
    this.closed = true;
    this.notify();
  }

  dismiss(err: Error): void {
    this.dismissed ??= err;
    this.close();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *drain(signal: AbortSignal): AsyncGenerator<AgentDirective> {
    const onAbort = (): void => this.close();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (this.dismissed) throw this.dismissed;
        const d = this.queue.shift();
        if (d) {
          yield d;
          continue;
        }
        if (this.closed) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * How a stream ends when this coordinator hands its agents over to the active one: UNAVAILABLE
 * naming it (in the message, and in the metadata clients follow), so the agent reconnects there.
 */
export function handedOver(active: string | undefined): RpcError {
  const md = new grpc.Metadata();
  if (active !== undefined && active !== '') md.set(ACTIVE_COORDINATOR_KEY, active);
  return new RpcError(
    Code.UNAVAILABLE,
    `this coordinator is a standby now; report to the active coordinator${active ? ` at ${active}` : ''}`,
    md,
  );
}

export function agentService(deps: ServiceDeps): ServiceImpl<typeof AgentService> {
  return {
    async *report(reports, ctx) {
      if (!deps.engine.acceptsAgents())
        throw unavailable('this coordinator is a standby; call the active coordinator');
      const outbox = new Outbox();
      const reading = (async () => {
        try {
          for await (const report of reports) {
            if (outbox.closed) break; // handed over or closed: this coordinator no longer listens
            deps.agents.record(report, outbox);
            deps.engine.onReport(report, outbox);
          }
        } catch {
          // the agent went away; its stream simply ends
        } finally {
          outbox.close();
          deps.agents.detach(outbox);
        }
      })();
      try {
        yield* outbox.drain(ctx.signal);
      } finally {
        outbox.close();
        // Not awaited: the agent never half-closes its side, so the reading ends only with the
        // call, which ends only once this returns.
        void reading;
      }
    },
    async getHealth() {
      deps.term();
      const now = performance.now();
      return {
        agents: deps.agents.all().map((r) =>
          create(AgentStatusSchema, {
            report: r.report,
            ageMs: BigInt(Math.round(now - r.receivedAt)),
          }),
        ),
        nodes: deps.engine.health(),
      };
    },
  };
}
