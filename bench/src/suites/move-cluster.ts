// The move suite's cluster: testcluster's startCluster (home with the catalog, data1, data2; one
// keyspace `accounts` with table accounts distributed by id) with the coordinator as a process of
// its own, a router in front, the table created through it and its rows loaded straight onto each
// range's owner, and a mover process.
import { join } from 'node:path';
import pg from 'pg';
import { JobService, KeyType, createClient, type Client, type Range } from '@tessera/proto';
import { startCluster, type Cluster } from '@tessera/testcluster';
import type { PgServer } from '@tessera/testkit';
import { REPO_ROOT, nodeEntry } from '../harness/entry.js';
import { startProcess, type Started } from '../harness/processes.js';
import { benchCoordinator, type BenchCoordinator } from '../targets/coordinator.js';
import { startRouter } from '../targets/router.js';
import type { SuiteContext } from './suite.js';

export interface MoveCluster {
  readonly base: Cluster<BenchCoordinator>;
  readonly jobs: Client<typeof JobService>;
  readonly routerUrl: string;
  readonly detail: string;
  /** Stops the mover, the router, the coordinator, and removes the servers. */
  stop(): Promise<void>;
}

async function startProgram(
  app: string,
  args: string[],
  name: string,
): Promise<{ proc: Started; describe: string }> {
  const entry = nodeEntry(join(REPO_ROOT, 'apps', app), 'main');
  if (!entry) throw new Error(`apps/${app} has no entry point`);
  const proc = startProcess(process.execPath, [...entry.args, ...args], {
    env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' },
  });
  proc.exited.then(
    (code) => {
      if (code !== 0 && code !== -1)
        process.stderr.write(`bench move: ${name} exited ${code}: ${proc.output().slice(-500)}\n`);
    },
    () => undefined,
  );
  return { proc, describe: entry.describe };
}

/** Inserts `rows` accounts, each on the data node whose range holds its id's hash. */
async function loadOntoOwners(base: Cluster<BenchCoordinator>, rows: number): Promise<void> {
  const cat = await base.catalog.getCatalog({});
  const byNode = new Map<string, Range[]>();
  for (const r of cat.ranges) byNode.set(r.owner, [...(byNode.get(r.owner) ?? []), r]);
  await Promise.all(
    [...base.byName].map(async ([name, server]: [string, PgServer]) => {
      const owned = (byNode.get(name) ?? [])
        .map((r) => `hashint8extended(g, 0) between ${r.lo} and ${r.hi}`)
        .join(' or ');
      if (!owned) return;
      await server.query(
        `insert into accounts (id, balance, pad) select g, 0, repeat('x', 80) from generate_series(1, ${rows}) g where ${owned}`,
      );
      await server.query('vacuum analyze accounts');
    }),
  );
}

export async function startMoveCluster(
  ctx: SuiteContext,
  o: { rows: number; clients: number; ranges: number },
): Promise<MoveCluster> {
  ctx.log('starting 3 Postgres servers: home (catalog), data1, data2');
  const base = await startCluster({
    name: 'bench-move',
    settings: { max_connections: String(Math.max(300, 8 * o.clients)) },
    launch: benchCoordinator,
    keyspaces: [{ name: 'accounts', keyType: KeyType.BIGINT, ranges: o.ranges }],
    tables: [{ kind: 'sharded', name: 'accounts', keyspace: 'accounts', keyColumn: 'id' }],
    clientDeadlineMs: 30_000,
  });
  const address = base.coordinator.address;
  const jobs = createClient(JobService, address, {
    channel: base.admin.grpcClient,
    deadlineMs: 30_000,
  });
  const started = await startRouter({
    coordinator: address,
    poolSize: o.clients + 4,
    poolMode: 'transaction',
    maxClients: o.clients * 2 + 10,
  });
  if (!started.ok) {
    await base.dispose();
    throw new Error(started.reason);
  }
  const router = started.target;
  const routerUrl = `postgresql://postgres@127.0.0.1:${router.port}/postgres`;
  const c = new pg.Client({ connectionString: routerUrl });
  await c.connect();
  await c.query(
    `create table accounts (id bigint primary key, balance bigint not null default 0, pad text not null)`,
  );
  await c.end();
  ctx.log(`loading ${o.rows} rows onto their owners`);
  await loadOntoOwners(base, o.rows);
  const mover = await startProgram(
    'mover',
    [
      ...['--coordinator', address, '--metrics-port', '0', '--mover-id', 'bench-mover'],
      ...['--catchup-budget-ms', '50', '--delete-rows-per-sec', '0'],
    ],
    'mover',
  );
  return {
    base,
    jobs,
    routerUrl,
    detail: `router ${router.detail}; mover ${mover.describe}; coordinator ${base.coordinator.describe}`,
    async stop() {
      await mover.proc.stop();
      await router.stop();
      await base.dispose();
    },
  };
}
