// The agents connected to this coordinator: each one's latest report (kept per instance address,
// with the monotonic time it came), the stream its directives go out on, and directives waiting
// for their outcome (reported back by id in a later report). Exported as
// `tessera_node_reachable{node,replica}` for dashboards.
import {
  create,
  AgentDirectiveSchema,
  type AgentDirective,
  type AgentReport,
  type DirectiveResult,
  type MessageInitShape,
} from '@tessera/proto';
import { Gauge, type Registry } from 'prom-client';

/** A directive as the engine writes it (the hub assigns ids). */
export type DirectiveInit = Omit<MessageInitShape<typeof AgentDirectiveSchema>, 'id' | '$typeName'>;

export interface ReceivedReport {
  report: AgentReport;
  /** Wall clock (for display). */
  receivedMs: number;
  /** Monotonic (for every decision). */
  receivedAt: number;
}

/** Where one agent's directives go. */
export interface DirectiveSink {
  push(d: AgentDirective): void;
  readonly closed: boolean;
  close(): void;
  /** Ends the stream with `err` (its agent reconnects where the error points). */
  dismiss(err: Error): void;
}

interface Pending {
  sink: DirectiveSink;
  resolve(r: DirectiveResult): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export class AgentReports {
  private readonly latest = new Map<string, ReceivedReport>();
  private readonly sinks = new Map<string, DirectiveSink>();
  private readonly pending = new Map<bigint, Pending>();
  private readonly reachable: Gauge<'node' | 'replica'>;
  // Unique across restarts of this coordinator, so an agent never mistakes a new directive for one
  // it is still running.
  private nextId = BigInt(Date.now()) * 1000n;

  constructor(registry: Registry) {
    this.reachable = new Gauge({
      name: 'tessera_node_reachable',
      help: 'Whether the agent of a node (or of its replica) last reported its Postgres reachable.',
      labelNames: ['node', 'replica'],
      registers: [registry],
    });
  }

  /** Records a report (and the stream it came on); settles directives whose outcome it carries. */
  record(report: AgentReport, sink?: DirectiveSink): void {
    if (report.node === '') return;
    const key = keyOf(report);
    this.latest.set(key, { report, receivedMs: Date.now(), receivedAt: performance.now() });
    if (sink) this.sinks.set(key, sink);
    this.reachable.set(
      { node: report.node, replica: String(report.inRecovery) },
      report.reachable ? 1 : 0,
    );
    for (const r of report.results) {
      const p = this.pending.get(r.id);
      if (!p) continue;
      this.pending.delete(r.id);
      clearTimeout(p.timer);
      p.resolve(r);
    }
  }

  /** The latest report of the agent at `address` for `node`, if any came. */
  at(node: string, address: string): ReceivedReport | undefined {
    return this.latest.get(`${node}\0${address}`);
  }

  /** The latest report for a node's primary (or replica), if any came: the freshest such. */
  get(node: string, replica = false): ReceivedReport | undefined {
    let best: ReceivedReport | undefined;
    for (const r of this.latest.values()) {
      if (r.report.node !== node || r.report.inRecovery !== replica) continue;
      if (!best || r.receivedAt > best.receivedAt) best = r;
    }
    return best;
  }

  all(): ReceivedReport[] {
    return [...this.latest.values()];
  }

  /** Sends a directive that needs no answer (a lease); false when the agent has no open stream. */
  send(node: string, address: string, d: DirectiveInit & { id?: bigint }): boolean {
    const sink = this.sinks.get(`${node}\0${address}`);
    if (!sink || sink.closed) return false;
    sink.push(create(AgentDirectiveSchema, d));
    return true;
  }

  /**
   * Sends a directive and resolves with its outcome; rejects when the agent has no open stream or
   * no outcome arrives within `timeoutMs`.
   */
  directive(
    node: string,
    address: string,
    d: DirectiveInit,
    timeoutMs: number,
  ): Promise<DirectiveResult> {
    const id = this.nextId++;
    const sink = this.sinks.get(`${node}\0${address}`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new Error(
            `the agent of ${address} did not carry out "${d.action}" within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      if (sink) this.pending.set(id, { sink, resolve, reject, timer });
      if (!sink || !this.send(node, address, { ...d, id })) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new Error(`the agent of ${address} is not connected to this coordinator`));
      }
    });
  }

  /** Forgets a stream that ended. */
  detach(sink: DirectiveSink): void {
    for (const [key, s] of this.sinks) if (s === sink) this.sinks.delete(key);
  }

  /** Ends every agent's stream (this coordinator stands by: they must find the active one). */
  closeAll(): void {
    for (const s of this.sinks.values()) s.close();
    this.sinks.clear();
  }

  /**
   * Another coordinator is active: every stream ends with `err` (which names it, so the agents
   * reconnect there), and directives still waiting on those streams are rejected, since their
   * outcome would come back to a coordinator that no longer listens.
   */
  dismissAll(err: Error): void {
    const sinks = new Set(this.sinks.values());
    for (const s of sinks) s.dismiss(err);
    this.sinks.clear();
    for (const [id, p] of this.pending) {
      if (!sinks.has(p.sink)) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(
        new Error(`the agent's stream was handed over to another coordinator: ${err.message}`),
      );
    }
  }
}

function keyOf(r: AgentReport): string {
  return `${r.node}\0${r.address}`;
}
