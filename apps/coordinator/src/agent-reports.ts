// The latest health report of each node's agent (primary and replica apart), kept in memory and
// exported as `tessera_node_reachable{node,replica}` for dashboards and, later, failover.
import type { AgentReport } from '@tessera/proto';
import { Gauge, type Registry } from 'prom-client';

export interface ReceivedReport {
  report: AgentReport;
  receivedMs: number;
}

export class AgentReports {
  private readonly latest = new Map<string, ReceivedReport>();
  private readonly reachable: Gauge<'node' | 'replica'>;

  constructor(registry: Registry) {
    this.reachable = new Gauge({
      name: 'tessera_node_reachable',
      help: 'Whether the agent of a node (or of its replica) last reported its Postgres reachable.',
      labelNames: ['node', 'replica'],
      registers: [registry],
    });
  }

  record(report: AgentReport): void {
    if (report.node === '') return;
    this.latest.set(`${report.node}\0${report.replica}`, { report, receivedMs: Date.now() });
    this.reachable.set(
      { node: report.node, replica: String(report.replica) },
      report.reachable ? 1 : 0,
    );
  }

  /** The latest report for a node's primary (or replica), if any came. */
  get(node: string, replica = false): ReceivedReport | undefined {
    return this.latest.get(`${node}\0${replica}`);
  }
}
