// Public surface of @tessera/telemetry: the logger, the metrics registry, the gRPC call metrics
// and the /metrics + /healthz endpoint every service runs.
export { createLogger, REDACTED_PATHS, type Logger, type LoggerOptions } from './logger.js';
export { createMetrics, type Metrics } from './metrics.js';
export { grpcServerMetrics, type GrpcServerMetrics } from './grpc-metrics.js';
export {
  startMetricsServer,
  type MetricsServer,
  type MetricsServerOptions,
} from './metrics-server.js';
export type { Registry } from 'prom-client';
export { runService, type ServiceDefinition } from './service.js';
