// The router's Prometheus series: client connections, statements by route kind, backend pool use
// and errors by SQLSTATE, on the service registry from @tessera/telemetry.
import { Counter, Gauge } from 'prom-client';
import type { Registry } from '@tessera/telemetry';
import type { RouteLabel } from './routing/route-types.js';

export interface RouterMetrics {
  clientConnections: Gauge;
  statements(route: RouteLabel): void;
  error(sqlstate: string): void;
}

export function routerMetrics(
  registry: Registry,
  poolUsage: () => Map<string, { idle: number; busy: number }>,
): RouterMetrics {
  const clientConnections = new Gauge({
    name: 'tessera_router_client_connections',
    help: 'Client connections open now',
    registers: [registry],
  });
  const statements = new Counter({
    name: 'tessera_router_statements_total',
    help: 'Statements routed, by route kind (single node, home node, all nodes, refused)',
    labelNames: ['route'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'tessera_router_errors_total',
    help: 'Errors sent to clients, by SQLSTATE',
    labelNames: ['sqlstate'],
    registers: [registry],
  });
  new Gauge({
    name: 'tessera_router_pool_backends',
    help: 'Backend connections per node, idle or busy',
    labelNames: ['node', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [node, u] of poolUsage()) {
        this.set({ node, state: 'idle' }, u.idle);
        this.set({ node, state: 'busy' }, u.busy);
      }
    },
  });
  return {
    clientConnections,
    statements: (route) => statements.inc({ route }),
    error: (sqlstate) => errors.inc({ sqlstate }),
  };
}
