// A prom-client registry per service: default process metrics under `tessera_`, every series
// labelled with the service's name.
import { Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
}

export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'tessera_' });
  return { registry };
}
