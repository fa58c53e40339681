// The failover engine's Prometheus series.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface FailoverMetrics {
  degraded: Gauge<'node'>;
  failingOver: Gauge<'node'>;
  refused: Gauge<'node'>;
  leaseRemaining: Gauge<'node'>;
  failovers: Counter<'node' | 'outcome'>;
  promotionSeconds: Gauge<'node'>;
}

export function failoverMetrics(registry: Registry): FailoverMetrics {
  const registers = [registry];
  return {
    degraded: new Gauge({
      name: 'tessera_node_degraded',
      help: '1 while a node has no streaming synchronous replica (recorded in the catalog).',
      labelNames: ['node'],
      registers,
    }),
    failingOver: new Gauge({
      name: 'tessera_node_failing_over',
      help: '1 while a node fails over (routers hold its statements).',
      labelNames: ['node'],
      registers,
    }),
    refused: new Gauge({
      name: 'tessera_node_failover_refused',
      help: '1 while a node whose primary is down is not failed over (see tessera status for why).',
      labelNames: ['node'],
      registers,
    }),
    leaseRemaining: new Gauge({
      name: 'tessera_node_lease_remaining_seconds',
      help: "Seconds left on the node's primary's lease as the active coordinator counts it.",
      labelNames: ['node'],
      registers,
    }),
    failovers: new Counter({
      name: 'tessera_failovers_total',
      help: 'Failovers by node and outcome (done, failed, followed).',
      labelNames: ['node', 'outcome'],
      registers,
    }),
    promotionSeconds: new Gauge({
      name: 'tessera_failover_last_seconds',
      help: "Duration of the node's last failover, from the decision to the epoch with the new address.",
      labelNames: ['node'],
      registers,
    }),
  };
}
