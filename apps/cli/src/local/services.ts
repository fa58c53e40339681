// The Tessera services the local cluster runs besides Postgres: one table entry per service. Two
// coordinators (active and standby), the router, the mover, and an agent per Postgres instance.
// Passwords reach them through their environment (flags show in ps), never through a server's.
import pg from 'pg';
import { coordinatorAnswers } from '@tessera/proto';
import { appEntry } from '../paths.js';
import type { ClusterPasswords } from './passwords.js';
import { superuserUrl } from './postgres-nodes.js';
import {
  CATALOG_DATABASE,
  LOCAL_NODES,
  localInstances,
  type ClusterFile,
  type Layout,
  type LocalInstance,
} from './layout.js';

export interface ServiceSpec {
  /** Also the name of its log file, D/logs/<name>.log. */
  name: string;
  /** How to run it (node arguments), or undefined when it is not part of this build. */
  entry(): { args: string[] } | undefined;
  args(c: ClusterFile, l: Layout): string[];
  /** Environment variables on top of the supervisor's: where secrets go. */
  env?(c: ClusterFile, passwords: ClusterPasswords | undefined): Record<string, string>;
  /** Whether this cluster runs it (default: always). */
  enabled?(c: ClusterFile): boolean;
  /** Ports it listens on, by purpose, for state.json and the printed summary. */
  ports(c: ClusterFile): Record<string, number>;
  /** Resolves true once it serves its clients. */
  ready(c: ClusterFile, passwords: ClusterPasswords | undefined): Promise<boolean>;
  /** Said by `up` when the service is not part of this build. */
  absentNote: string;
}

export const coordinatorAddressOf = (c: ClusterFile): string => `127.0.0.1:${c.coordinatorPort}`;
/** Every coordinator, comma-separated: what clients are given, so they follow the active one. */
export const coordinatorListOf = (c: ClusterFile): string =>
  [c.coordinatorPort, ...(c.standbyCoordinatorPort ? [c.standbyCoordinatorPort] : [])]
    .map((p) => `127.0.0.1:${p}`)
    .join(',');
/**
 * The catalog on the home node: its primary and, with replicas, its replica (it follows failovers).
 * With the superuser's password, which the coordinator also uses on every node for 2PC recovery.
 */
export const catalogUrlOf = (c: ClusterFile, password?: string): string => {
  const hosts = localInstances(c)
    .filter((i) => i.node === 'home')
    .map((i) => `127.0.0.1:${i.port}`);
  const login = password === undefined ? 'postgres' : `postgres:${encodeURIComponent(password)}`;
  return `postgresql://${login}@${hosts.join(',')}/${CATALOG_DATABASE}`;
};

/** The catalog URL goes in the environment (TESSERA_CATALOG_URL): it may hold the password. */
const coordinatorEnv = (c: ClusterFile, p: ClusterPasswords | undefined) => ({
  TESSERA_CATALOG_URL: catalogUrlOf(c, p?.postgres),
});

/** What the router and the mover log in to the nodes with (unset: a trust cluster). */
const nodePasswordEnv = (p: ClusterPasswords | undefined): Record<string, string> =>
  p ? { TESSERA_NODE_PASSWORD: p.postgres } : {};

const coordinatorArgs = (port: number, metricsPort: number): string[] => [
  '--listen',
  `127.0.0.1:${port}`,
  '--metrics-port',
  String(metricsPort),
];

/** An agent for one instance: found by the catalog by its address, fencing it by its data directory. */
function agentSpec(node: string, replica: boolean): ServiceSpec {
  const instance = (c: ClusterFile): LocalInstance | undefined =>
    localInstances(c).find((i) => i.node === node && i.replica === replica);
  return {
    name: `agent-${node}${replica ? '-replica' : ''}`,
    entry: () => appEntry('agent', 'tessera-agent'),
    enabled: (c) => instance(c) !== undefined,
    args: (c, l) => {
      const i = instance(c)!;
      return [
        '--coordinator',
        coordinatorListOf(c),
        '--node',
        node,
        '--address',
        `127.0.0.1:${i.port}`,
        '--data-dir',
        l.nodeDataDir(i.dir),
        '--pg-log',
        l.logFile(`postgres-${i.dir}`),
        '--metrics-port',
        '0',
      ];
    },
    // Its instance's URL (TESSERA_PG_URL) may hold the password: the environment, not argv.
    env: (c, p) => ({ TESSERA_PG_URL: superuserUrl(instance(c)!.port, 'postgres', p?.postgres) }),
    ports: () => ({}),
    ready: async () => true,
    absentNote: 'the agent is not part of this build: no failover',
  };
}

export const AGENT_SERVICES: readonly ServiceSpec[] = LOCAL_NODES.flatMap((n) => [
  agentSpec(n.name, false),
  agentSpec(n.name, true),
]);
export const routerAddressOf = (c: ClusterFile): string => `127.0.0.1:${c.routerPort}`;

export const SERVICES: readonly ServiceSpec[] = [
  {
    name: 'coordinator',
    entry: () => appEntry('coordinator', 'tessera-coordinator'),
    args: (c) => coordinatorArgs(c.coordinatorPort, c.coordinatorMetricsPort),
    env: coordinatorEnv,
    ports: (c) => ({ grpc: c.coordinatorPort, metrics: c.coordinatorMetricsPort }),
    ready: (c) => coordinatorAnswers(coordinatorAddressOf(c)),
    absentNote: 'the coordinator is not part of this build',
  },
  {
    // The standby: it takes over when the active one dies; every client is given both.
    name: 'coordinator-2',
    entry: () => appEntry('coordinator', 'tessera-coordinator'),
    enabled: (c) => c.standbyCoordinatorPort !== undefined,
    args: (c) =>
      coordinatorArgs(c.standbyCoordinatorPort ?? 0, c.standbyCoordinatorMetricsPort ?? 0),
    env: coordinatorEnv,
    ports: (c) => ({
      grpc: c.standbyCoordinatorPort ?? 0,
      metrics: c.standbyCoordinatorMetricsPort ?? 0,
    }),
    // A standby answers by sending the call on to the active one.
    ready: (c) => coordinatorAnswers(`127.0.0.1:${c.standbyCoordinatorPort ?? 0}`),
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
      coordinatorListOf(c),
      '--metrics-port',
      String(c.routerMetricsPort),
      // With passwords, clients log in with SCRAM-SHA-256 against the home node's verifiers.
      '--auth',
      c.auth === 'scram' ? 'scram' : 'trust',
    ],
    // The superuser reads the verifiers on home (--auth-user's default) and is the service login.
    env: (_c, p) => ({
      ...nodePasswordEnv(p),
      ...(p ? { TESSERA_AUTH_PASSWORD: p.postgres } : {}),
    }),
    ports: (c) => ({ pg: c.routerPort, metrics: c.routerMetricsPort }),
    // Listening is not enough: until its first catalog arrives the router answers 57P03.
    ready: (c, p) => routerAnswers(c.routerPort, p?.postgres),
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
    env: (_c, p) => nodePasswordEnv(p),
    ports: (c) => ({ metrics: c.moverMetricsPort ?? 0 }),
    // It has no clients of its own: running is ready (it waits for the coordinator itself).
    ready: () => Promise.resolve(true),
    absentNote:
      'the mover is not part of this build: moves, rebalance and node additions stay queued',
  },
  ...AGENT_SERVICES,
];

/** True when `select 1` through the router succeeds (it has a catalog and reaches home). */
export async function routerAnswers(
  port: number,
  password: string | undefined,
  timeoutMs = 2_000,
): Promise<boolean> {
  const client = new pg.Client({
    connectionString: superuserUrl(port, 'postgres', password),
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
