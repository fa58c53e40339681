// Metrics of served gRPC calls: a call counter by status code and a duration histogram. Feed it
// from @tessera/proto's `onCallEnd` hook.
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

export interface GrpcServerMetrics {
  /** `service` is the full name (tessera.v1.CatalogService), `code` the status name (OK, NOT_FOUND). */
  observe(service: string, method: string, code: string, seconds: number): void;
}

const CALLS = 'tessera_grpc_server_calls_total';
const DURATION = 'tessera_grpc_server_call_duration_seconds';

/** Safe to call more than once per registry: the metrics are made once and shared. */
export function grpcServerMetrics(registry: Registry): GrpcServerMetrics {
  const calls =
    (registry.getSingleMetric(CALLS) as Counter<'service' | 'method' | 'code'> | undefined) ??
    new Counter({
      name: CALLS,
      help: 'gRPC calls served, by final status code.',
      labelNames: ['service', 'method', 'code'],
      registers: [registry],
    });
  const duration =
    (registry.getSingleMetric(DURATION) as Histogram<'service' | 'method'> | undefined) ??
    new Histogram({
      name: DURATION,
      help: 'Duration of served gRPC calls (streams: until they end).',
      labelNames: ['service', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  return {
    observe(service, method, code, seconds) {
      calls.inc({ service, method, code });
      duration.observe({ service, method }, seconds);
    },
  };
}
