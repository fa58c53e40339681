// The agent's Prometheus series.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface AgentMetrics {
  reachable: Gauge;
  inRecovery: Gauge;
  leaseRemaining: Gauge;
  reports: Counter;
  directives: Counter<'action' | 'outcome'>;
  selfFences: Counter<'because'>;
}

export function agentMetrics(registry: Registry): AgentMetrics {
  const registers = [registry];
  return {
    reachable: new Gauge({
      name: 'tessera_agent_postgres_reachable',
      help: '1 while the watched Postgres answers probes.',
      registers,
    }),
    inRecovery: new Gauge({
      name: 'tessera_agent_postgres_in_recovery',
      help: '1 while the watched Postgres is a standby (as of the last probe that answered).',
      registers,
    }),
    leaseRemaining: new Gauge({
      name: 'tessera_agent_lease_remaining_seconds',
      help: "Seconds left on the primary's lease (0: none held).",
      registers,
    }),
    reports: new Counter({
      name: 'tessera_agent_reports_total',
      help: 'Reports sent to the coordinator.',
      registers,
    }),
    directives: new Counter({
      name: 'tessera_agent_directives_total',
      help: 'Directives carried out, by action and outcome.',
      labelNames: ['action', 'outcome'],
      registers,
    }),
    selfFences: new Counter({
      name: 'tessera_agent_self_fences_total',
      help: 'Times the agent stopped its own primary (lease lapsed, or a fenced former primary ran).',
      labelNames: ['because'],
      registers,
    }),
  };
}
