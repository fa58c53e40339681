// The Tessera services the local cluster runs besides Postgres: one table entry per service.
// Adding the mover or the agents later is one more entry here (agents: one per node).
import { connect } from 'node:net';
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
    ready: (c) => acceptsConnections(c.routerPort),
    absentNote: 'the router is not part of this build yet: connect to the nodes directly',
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

/** True when a TCP connection to 127.0.0.1:port is accepted. */
export function acceptsConnections(port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
