// The recovery loop's Prometheus metrics, registered once per coordinator process (terms come and
// go, the registry stays).
import type { Registry } from '@tessera/telemetry';
import { Counter, Gauge } from 'prom-client';

export interface RecoveryMetrics {
  /** Prepared transactions of this cluster still on the nodes after the last pass. */
  inDoubt: Gauge;
  /** Prepared transactions finished by recovery (loop or Resolve), by outcome commit/abort. */
  recovered: Counter<'outcome'>;
  /** Nodes a pass could not read, by node. */
  nodeErrors: Counter<'node'>;
  /** Decision rows deleted once every participant had finished. */
  cleaned: Counter;
}

export function recoveryMetrics(registry: Registry): RecoveryMetrics {
  return {
    inDoubt: new Gauge({
      name: 'tessera_txn_in_doubt',
      help: "Prepared transactions of this cluster left on the nodes after the recovery loop's last pass.",
      registers: [registry],
    }),
    recovered: new Counter({
      name: 'tessera_txn_recovered_total',
      help: 'Prepared transactions committed or rolled back by recovery.',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    nodeErrors: new Counter({
      name: 'tessera_txn_recovery_node_errors_total',
      help: 'Recovery passes that could not read a node.',
      labelNames: ['node'] as const,
      registers: [registry],
    }),
    cleaned: new Counter({
      name: 'tessera_txn_decisions_cleaned_total',
      help: 'Decision log rows deleted after every participant finished.',
      registers: [registry],
    }),
  };
}
