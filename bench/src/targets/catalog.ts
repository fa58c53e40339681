// A coordinator process with a catalog in which some tables are distributed in one keyspace
// (pgbench's four tables by bid unless a suite says otherwise): what a router needs to route them.
// testcluster's attachCluster over the suite's servers, with the coordinator as its own process
// (targets/coordinator.ts); its catalog lives on the home node.
import { KeyType, type Range, type ShapeTable } from '@tessera/proto';
import { attachCluster } from '@tessera/testcluster';
import type { PgServer } from '@tessera/testkit';
import { benchCoordinator } from './coordinator.js';

export const KEYSPACE = 'pgbench';
export const PGBENCH_TABLES = [
  'pgbench_accounts',
  'pgbench_tellers',
  'pgbench_branches',
  'pgbench_history',
];

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

/** Starts the coordinator and declares the layout; throws with the coordinator's output on failure. */
export async function startBenchCatalog(layout: CatalogLayout): Promise<BenchCatalog> {
  const ks = layout.keyspace ?? PGBENCH_KEYSPACE;
  const tessera = await attachCluster(layout.home, layout.data, {
    launch: benchCoordinator,
    // One range per data node (round-robin by the coordinator), or one range on the home node.
    keyspaces: [{ name: ks.name, keyType: ks.keyType, ranges: Math.max(1, layout.data.length) }],
    tables: ks.tables.map((t): ShapeTable => ({ kind: 'sharded', keyspace: ks.name, ...t })),
    clientDeadlineMs: 10_000,
  });
  try {
    const snapshot = await tessera.catalog.getCatalog({});
    const { address, describe } = tessera.coordinator;
    return {
      address,
      ranges: snapshot.ranges.filter((r) => r.keyspace === ks.name),
      seed: snapshot.keyspaces.find((k) => k.name === ks.name)?.seed ?? 0n,
      detail: `coordinator ${describe} on ${address}`,
      stop: () => tessera.dispose(),
    };
  } catch (e) {
    await tessera.dispose();
    throw e;
  }
}
