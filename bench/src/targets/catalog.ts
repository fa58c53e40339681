// A coordinator process with a catalog in which some tables are distributed in one keyspace
// (pgbench's four tables by bid unless a suite says otherwise): what a router needs to route them.
// The coordinator runs as its own process (it must not share the harness's event loop or CPU
// accounting); its catalog lives on the home node.
import { join } from 'node:path';
import { freePort } from '@tessera/pgctl';
import {
  AdminService,
  CatalogService,
  KeyType,
  NodeRole,
  createClient,
  type Range,
} from '@tessera/proto';
import type { PgServer } from '@tessera/testkit';
import { REPO_ROOT, nodeEntry } from '../harness/entry.js';
import { startProcess, waitFor, type Started } from '../harness/processes.js';

export const KEYSPACE = 'pgbench';
export const PGBENCH_TABLES = [
  'pgbench_accounts',
  'pgbench_tellers',
  'pgbench_branches',
  'pgbench_history',
];
const CATALOG_DATABASE = 'tessera_catalog';

/** The keyspace a suite's tables are distributed in, and those tables with their key column. */
export interface BenchKeyspace {
  name: string;
  keyType: KeyType;
  tables: readonly { name: string; keyColumn: string }[];
}

const PGBENCH_KEYSPACE: BenchKeyspace = {
  name: KEYSPACE,
  keyType: KeyType.INT,
  tables: PGBENCH_TABLES.map((name) => ({ name, keyColumn: 'bid' })),
};

export interface BenchCatalog {
  /** host:port of the coordinator's gRPC server, for routers. */
  readonly address: string;
  readonly ranges: readonly Range[];
  readonly seed: bigint;
  readonly detail: string;
  stop(): Promise<void>;
}

export interface CatalogLayout {
  /** Holds the catalog database; owns the data only when there are no data nodes. */
  home: PgServer;
  data: readonly PgServer[];
  /** pgbench's tables by bid (int) when absent. */
  keyspace?: BenchKeyspace | undefined;
}

/** The catalog name (home, data1, ...) of the node whose range holds `hash`. */
export function ownerOf(ranges: readonly Range[], hash: bigint): string | undefined {
  return ranges.find((r) => r.lo <= hash && hash <= r.hi)?.owner;
}

async function answers(address: string): Promise<boolean> {
  const client = createClient(CatalogService, address, { deadlineMs: 1_000 });
  try {
    await client.getCatalog({});
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}

/** Starts the coordinator and declares the layout; throws with the coordinator's output on failure. */
export async function startBenchCatalog(layout: CatalogLayout): Promise<BenchCatalog> {
  const entry = nodeEntry(join(REPO_ROOT, 'apps', 'coordinator'), 'main');
  if (!entry) throw new Error('apps/coordinator has no entry point');
  const exists = await layout.home.query('select 1 from pg_database where datname = $1', [
    CATALOG_DATABASE,
  ]);
  if (exists.length === 0) await layout.home.query(`create database ${CATALOG_DATABASE}`);
  const address = `127.0.0.1:${await freePort()}`;
  const proc: Started = startProcess(
    process.execPath,
    [
      ...entry.args,
      '--catalog-url',
      layout.home.url(CATALOG_DATABASE),
      '--listen',
      address,
      '--metrics-port',
      '0',
    ],
    { env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' } },
  );
  const up = await waitFor(
    async () => proc.child.exitCode !== null || (await answers(address)),
    60_000,
    200,
  );
  if (!up || proc.child.exitCode !== null) {
    await proc.stop();
    throw new Error(`the coordinator did not start: ${proc.output().trim().slice(-400)}`);
  }
  const admin = createClient(AdminService, address, { deadlineMs: 10_000 });
  const catalog = createClient(CatalogService, address, { deadlineMs: 10_000 });
  try {
    await admin.addNode({
      name: 'home',
      host: layout.home.host,
      port: layout.home.port,
      role: NodeRole.HOME,
    });
    for (const [i, node] of layout.data.entries()) {
      await admin.addNode({
        name: `data${i + 1}`,
        host: node.host,
        port: node.port,
        role: NodeRole.DATA,
      });
    }
    // One range per data node (round-robin by the coordinator), or one range on the home node.
    const ks = layout.keyspace ?? PGBENCH_KEYSPACE;
    await admin.createKeyspace({
      name: ks.name,
      keyType: ks.keyType,
      ranges: Math.max(1, layout.data.length),
      seed: 0n,
    });
    for (const t of ks.tables) {
      await admin.distributeTable({
        schema: 'public',
        name: t.name,
        keyColumn: t.keyColumn,
        keyspace: ks.name,
      });
    }
    const snapshot = await catalog.getCatalog({});
    const ranges = snapshot.ranges.filter((r) => r.keyspace === ks.name);
    const seed = snapshot.keyspaces.find((k) => k.name === ks.name)?.seed ?? 0n;
    return {
      address,
      ranges,
      seed,
      detail: `coordinator ${entry.describe} on ${address}`,
      stop: () => proc.stop(),
    };
  } catch (e) {
    await proc.stop();
    throw e;
  } finally {
    admin.close();
    catalog.close();
  }
}
