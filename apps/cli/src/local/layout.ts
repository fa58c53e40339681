// Where the local cluster (`tessera up`) keeps things under its directory D, and the small JSON
// files that remember it: cluster.json (ports, chosen once, so every `up` reuses them), state.json
// (what the supervisor is running right now) and passwords.json (passwords.ts).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/** The Postgres nodes of the local cluster, in start order; the first is the home node. */
export const LOCAL_NODES = [
  { name: 'home', role: 'home', defaultPort: 15432 },
  { name: 'data1', role: 'data', defaultPort: 15433 },
  { name: 'data2', role: 'data', defaultPort: 15434 },
] as const;

export type LocalNodeName = (typeof LOCAL_NODES)[number]['name'];

/** A Postgres instance of the local cluster: a node's first server, or its replica. */
export interface LocalInstance {
  node: LocalNodeName;
  /** The data directory's name under nodes/ (and the instance's name in logs and state.json). */
  dir: string;
  replica: boolean;
  port: number;
}

/** The instances of a cluster: each node's first server, then (with replicas) its replica. */
export function localInstances(c: ClusterFile): LocalInstance[] {
  const out: LocalInstance[] = LOCAL_NODES.map((n) => ({
    node: n.name,
    dir: n.name,
    replica: false,
    port: c.nodePorts[n.name],
  }));
  if (c.replicas && c.replicaPorts)
    for (const n of LOCAL_NODES)
      out.push({
        node: n.name,
        dir: `${n.name}-replica`,
        replica: true,
        port: c.replicaPorts[n.name],
      });
  return out;
}

/** The database on the home node that holds the coordinator's catalog. */
export const CATALOG_DATABASE = 'tessera';

export interface Layout {
  dir: string;
  nodesDir: string;
  logsDir: string;
  clusterFile: string;
  stateFile: string;
  passwordsFile: string;
  pidFile: string;
  nodeDataDir(name: string): string;
  logFile(service: string): string;
}

/** D: --dir, else TESSERA_HOME, else .tessera in the current directory; always absolute. */
export function resolveDir(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): string {
  const d = flag ?? env.TESSERA_HOME ?? '.tessera';
  return isAbsolute(d) ? d : resolve(cwd, d);
}

export function layout(dir: string): Layout {
  return {
    dir,
    nodesDir: join(dir, 'nodes'),
    logsDir: join(dir, 'logs'),
    clusterFile: join(dir, 'cluster.json'),
    stateFile: join(dir, 'state.json'),
    passwordsFile: join(dir, 'passwords.json'),
    pidFile: join(dir, 'supervisor.pid'),
    nodeDataDir: (name) => join(dir, 'nodes', name),
    logFile: (service) => join(dir, 'logs', `${service}.log`),
  };
}

/** Chosen on the first `up` and kept: a port that was free once stays this cluster's port. */
export interface ClusterFile {
  version: 1;
  nodePorts: Record<LocalNodeName, number>;
  coordinatorPort: number;
  coordinatorMetricsPort: number;
  routerPort: number;
  routerMetricsPort: number;
  /** The mover's metrics port (clusters made before the mover existed lack it: a free port). */
  moverMetricsPort?: number;
  /** Set once the nodes are registered and the sample schema is loaded. */
  bootstrapped: boolean;
  /** Every node has a synchronous streaming replica (absent in files from before replicas: none). */
  replicas?: boolean;
  /** The replicas' ports, by node. */
  replicaPorts?: Record<LocalNodeName, number>;
  /**
   * How logins are checked: `scram` (router and nodes ask for passwords, D/passwords.json), or
   * `trust` (none; `up --trust`, and files from before passwords were the default, which lack it).
   */
  auth?: 'scram' | 'trust';
  /** The second (standby) coordinator. */
  standbyCoordinatorPort?: number;
  standbyCoordinatorMetricsPort?: number;
}

export interface ProcessRecord {
  pid: number;
  /** Start time from /proc (clock ticks since boot), so a reused pid is not mistaken for ours. */
  startTicks?: number;
}

export interface ServiceState extends ProcessRecord {
  restarts: number;
  /** Ports it listens on, by purpose ("grpc", "metrics", "pg"). */
  ports: Record<string, number>;
}

export interface StateFile {
  supervisor: ProcessRecord;
  nodes: Record<string, ProcessRecord & { port: number }>;
  services: Record<string, ServiceState>;
}

function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Written to a temp file and renamed, so a reader never sees half a file. */
function writeJson(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n');
  renameSync(tmp, file);
}

export const readClusterFile = (l: Layout): ClusterFile | undefined =>
  readJson<ClusterFile>(l.clusterFile);
export const writeClusterFile = (l: Layout, c: ClusterFile): void => writeJson(l.clusterFile, c);
export const readStateFile = (l: Layout): StateFile | undefined => readJson<StateFile>(l.stateFile);
export const writeStateFile = (l: Layout, s: StateFile): void => writeJson(l.stateFile, s);

export function readSupervisorPid(l: Layout): number | undefined {
  if (!existsSync(l.pidFile)) return undefined;
  const pid = Number(readFileSync(l.pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
