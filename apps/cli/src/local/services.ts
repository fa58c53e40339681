// The Tessera services the local cluster runs besides Postgres: one table entry per service.
// Adding the agents later is one more entry here (agents: one per node).
import pg from 'pg';
import { CatalogService, createClient } from '@tessera/proto';
import { appEntry } from '../paths.js';
import { superuserUrl } from './postgres-nodes.js';
import { CATALOG_DATABASE, type ClusterFile } from './layout.js';

export interface ServiceSpec {
  /** Also the name of its log file, D/logs/<name>.log. */
  name: string;
  /** How to run it (node arguments), or undefined when it is not part of this build. */
  entry(): { args: string[] } | undefined;
  args(c: ClusterFile): string[];
  /** Ports it listens on, by purpose, for state.json and the printed summary. */
  ports(c: ClusterFile): Record<string, number>;
  /** Resolves true once it serves its clients. */
  ready(c: ClusterFile): Promise<boolean>;
  /** Said by `up` when the service is not part of this build. */
  absentNote: string;
}

export const coordinatorAddressOf = (c: ClusterFile): string => `127.0.0.1:${c.coordinatorPort}`;
export const routerAddressOf = (c: ClusterFile): string => `127.0.0.1:${c.routerPort}`;

export const SERVICES: readonly ServiceSpec[] = [
  {
    name: 'coordinator',
    entry: () => appEntry('coordinator', 'tessera-coordinator'),
    args: (c) => [
      '--catalog-url',
      superuserUrl(c.nodePorts.home, CATALOG_DATABASE),
      '--listen',
      coordinatorAddressOf(c),
      '--metrics-port',
      String(c.coordinatorMetricsPort),
    ],
    ports: (c) => ({ grpc: c.coordinatorPort, metrics: c.coordinatorMetricsPort }),
    ready: (c) => coordinatorAnswers(coordinatorAddressOf(c)),
    absentNote: 'the coordinator is not part of this build',
  },
  {
    name: 'router',
    // Only once the router ships its bin shim: until then it is work in progress, not started.
    entry: () => appEntry('router', 'tessera-router', { requireShim: true }),
    args: (c) => [
      '--listen',
      routerAddressOf(c),
      '--coordinator',
      coordinatorAddressOf(c),
      '--metrics-port',
      String(c.routerMetricsPort),
    ],
    ports: (c) => ({ pg: c.routerPort, metrics: c.routerMetricsPort }),
    // Listening is not enough: until its first catalog arrives the router answers 57P03.
    ready: (c) => routerAnswers(c.routerPort),
    absentNote: 'the router is not part of this build yet: connect to the nodes directly',
  },
  {
    name: 'mover',
    entry: () => appEntry('mover', 'tessera-mover', { requireShim: true }),
    args: (c) => [
      '--coordinator',
      coordinatorAddressOf(c),
      '--metrics-port',
      String(c.moverMetricsPort ?? 0),
      // Stable, so a restarted mover resumes its jobs at once instead of after their leases.
      '--mover-id',
      'mover-local',
    ],
    ports: (c) => ({ metrics: c.moverMetricsPort ?? 0 }),
    // It has no clients of its own: running is ready (it waits for the coordinator itself).
    ready: () => Promise.resolve(true),
    absentNote:
      'the mover is not part of this build: moves, rebalance and node additions stay queued',
  },
];

/** True when GetCatalog succeeds (a standby coordinator answers UNAVAILABLE: not ready). */
export async function coordinatorAnswers(address: string, timeoutMs = 2_000): Promise<boolean> {
  const client = createClient(CatalogService, address, { deadlineMs: timeoutMs });
  try {
    await client.getCatalog({});
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}

/** True when `select 1` through the router succeeds (it has a catalog and reaches home). */
export async function routerAnswers(port: number, timeoutMs = 2_000): Promise<boolean> {
  const client = new pg.Client({
    connectionString: superuserUrl(port, 'postgres'),
    connectionTimeoutMillis: timeoutMs,
  });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
