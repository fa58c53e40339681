// The cluster the failover suite kills primaries in: the home node (which holds the catalog) and
// one data node, each a primary with a synchronous streaming replica (real Postgres), two
// coordinator processes over the catalog (its URL names both home servers), and an agent process
// per instance with its default timings. The suite adds a router over it (failover-router.ts)
// and its writers (failover-writers.ts).
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@tessera/pgctl';
import {
  AdminService,
  CatalogService,
  NodeRole,
  ReplicaState,
  createClient,
  type Catalog,
  type Client,
  type Node,
} from '@tessera/proto';
import { startReplicatedPostgres, type PgServer, type ReplicatedPostgres } from '@tessera/testkit';
import { REPO_ROOT, nodeEntry } from '../harness/entry.js';
import { startProcess, waitFor, type Started } from '../harness/processes.js';

export const NODES = ['home', 'data1'] as const;
export type NodeName = (typeof NODES)[number];

export const addressOf = (s: { host: string; port: number }): string => `${s.host}:${s.port}`;

export interface FailoverCluster {
  coordinators: Started[];
  coordinatorList: string;
  admin: Client<typeof AdminService>;
  /** The latest catalog, kept current by a watch. */
  current(): Catalog | undefined;
  node(name: NodeName): Node | undefined;
  /** Every Postgres instance by address. */
  servers: Map<string, PgServer>;
  /** A node's instances, the one the catalog names as its primary first. */
  instances(name: NodeName): PgServer[];
  detail: string;
  stop(): Promise<void>;
}

/** One ISO-timestamped log line of a coordinator, parsed. */
export interface LogLine {
  time: number;
  msg: string;
  fields: Record<string, unknown>;
}

export function coordinatorLog(c: FailoverCluster): LogLine[] {
  const out: LogLine[] = [];
  for (const p of c.coordinators)
    for (const line of p.output().split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const e = JSON.parse(line) as Record<string, unknown>;
        out.push({ time: Date.parse(String(e['time'])), msg: String(e['msg']), fields: e });
      } catch {
        // a line cut by the output window
      }
    }
  return out.sort((a, b) => a.time - b.time);
}

export async function startFailoverCluster(log: (l: string) => void): Promise<FailoverCluster> {
  const coordinatorEntry = nodeEntry(join(REPO_ROOT, 'apps', 'coordinator'), 'main');
  const agentEntry = nodeEntry(join(REPO_ROOT, 'apps', 'agent'), 'main');
  if (!coordinatorEntry || !agentEntry)
    throw new Error('apps/coordinator or apps/agent has no entry point');
  log('starting Postgres: home and data1, each a primary with a streaming replica');
  const sets: ReplicatedPostgres[] = [];
  const procs: Started[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of procs.reverse()) await p.stop().catch(() => undefined);
    for (const s of sets) await s.dispose().catch(() => undefined);
  };
  try {
    for (const name of NODES)
      sets.push(await startReplicatedPostgres({ name: `fo-${name}`, synchronous: false }));
    const [home, data1] = sets as [ReplicatedPostgres, ReplicatedPostgres];
    await home.primary.query('create database tessera');
    const catalogUrl = `postgresql://postgres@${addressOf(home.primary)},${addressOf(home.replicas[0]!)}/tessera`;
    const addresses: string[] = [];
    for (let i = 0; i < 2; i++) {
      const address = `127.0.0.1:${await freePort()}`;
      addresses.push(address);
      procs.push(
        startProcess(
          process.execPath,
          [
            ...coordinatorEntry.args,
            '--catalog-url',
            catalogUrl,
            '--listen',
            address,
            '--metrics-port',
            '0',
          ],
          { env: { ...process.env, TESSERA_LOG_LEVEL: 'info' } },
        ),
      );
    }
    const coordinators = [...procs];
    const coordinatorList = addresses.join(',');
    const catalog = createClient(CatalogService, coordinatorList, { deadlineMs: 2_000 });
    const up = await waitFor(
      async () => {
        try {
          await catalog.getCatalog({});
          return true;
        } catch {
          return false;
        }
      },
      60_000,
      200,
    );
    if (!up)
      throw new Error(`no coordinator became active: ${coordinators[0]!.output().slice(-400)}`);
    const admin = createClient(AdminService, coordinatorList, { deadlineMs: 60_000 });
    for (const [i, name] of NODES.entries()) {
      const s = sets[i]!;
      await admin.addNode({
        name,
        host: s.primary.host,
        port: s.primary.port,
        role: name === 'home' ? NodeRole.HOME : NodeRole.DATA,
        replicaHost: s.replicas[0]!.host,
        replicaPort: s.replicas[0]!.port,
        replicaName: s.replicas[0]!.applicationName,
      });
    }
    const servers = new Map<string, PgServer>();
    const byNode = new Map<NodeName, PgServer[]>();
    for (const [i, name] of NODES.entries())
      for (const s of sets[i]!.all()) {
        byNode.set(name, [...(byNode.get(name) ?? []), s]);
        servers.set(addressOf(s), s);
        procs.push(
          startProcess(
            process.execPath,
            [
              ...agentEntry.args,
              '--coordinator',
              coordinatorList,
              '--node',
              name,
              '--pg-url',
              s.url(),
              '--address',
              addressOf(s),
              '--data-dir',
              s.dataDir,
              '--metrics-port',
              '0',
            ],
            { env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' } },
          ),
        );
      }
    let current: Catalog | undefined;
    const watch = new AbortController();
    void (async () => {
      while (!watch.signal.aborted) {
        try {
          for await (const c of catalog.watchCatalog(
            { afterEpoch: current?.epoch ?? 0n },
            { signal: watch.signal },
          ))
            current = c;
        } catch {
          await sleep(100);
        }
      }
    })();
    await waitFor(
      async () => NODES.every((n) => isSynced(current?.nodes.find((x) => x.name === n))),
      120_000,
      200,
    );
    void data1;
    return {
      coordinators,
      coordinatorList,
      admin,
      current: () => current,
      node: (name) => current?.nodes.find((n) => n.name === name),
      servers,
      instances: (name) => {
        const n = current?.nodes.find((x) => x.name === name);
        const all = byNode.get(name) ?? [];
        const named = n ? all.filter((s) => addressOf(s) === addressOf(n)) : [];
        return [...named, ...all.filter((s) => !named.includes(s))];
      },
      detail: `2 coordinators (${coordinatorEntry.describe}), 4 agents (${agentEntry.describe}, default timings)`,
      stop: async () => {
        watch.abort();
        catalog.close();
        admin.close();
        await stopAll();
      },
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** A synchronous replica in the durable sync set and not degraded: ready for the next kill. */
export function isSynced(n: Node | undefined): boolean {
  return (
    n !== undefined &&
    !n.degraded &&
    !n.failingOver &&
    n.replicas.some((r) => r.state === ReplicaState.SYNC)
  );
}
