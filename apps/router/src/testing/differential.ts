// Test fixture of the differential tests: a router cluster and one plain Postgres started side by
// side, a node-postgres client on each, and the same setup statements run through both, so a
// test compares what the router answers with what Postgres answers. Never a mock.
import pg from 'pg';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type ClusterOptions, type TestCluster } from './cluster.js';

/** The orders fixture: tenants (bigint) and ki (int) keyspaces of four ranges each. */
export const ORDERS_CLUSTER: ClusterOptions = {
  keyspaces: [
    { name: 'tenants', keyType: KeyType.BIGINT, ranges: 4, seed: 0n },
    { name: 'ki', keyType: KeyType.INT, ranges: 4, seed: 5n },
  ],
  tables: [
    { name: 'orders', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
    { name: 'items', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
    { name: 'counters', kind: 'sharded', keyspace: 'ki', keyColumn: 'k' },
    { name: 'countries', kind: 'reference' },
  ],
};

export interface DifferentialPair {
  readonly cluster: TestCluster;
  readonly plain: PgServer;
  /** Connected to the router. */
  readonly viaRouter: pg.Client;
  /** Connected to the plain Postgres. */
  readonly direct: pg.Client;
  /** Runs each statement through both, the plain Postgres first. */
  both(statements: readonly string[]): Promise<void>;
  dispose(): Promise<void>;
}

/** `plainName` names the plain server's data directory; `setup` runs through both clients. */
export async function startDifferentialPair(
  opts: ClusterOptions,
  plainName: string,
  setup: readonly string[] = [],
): Promise<DifferentialPair> {
  const [cluster, plain] = await Promise.all([
    startTestCluster(opts),
    startPostgres({ name: plainName }),
  ]);
  const viaRouter = new pg.Client({ connectionString: cluster.url() });
  let direct: pg.Client | undefined;
  const dispose = async (): Promise<void> => {
    await viaRouter.end().catch(() => undefined);
    await direct?.end().catch(() => undefined);
    await cluster.dispose();
    await plain.dispose();
  };
  let connected: pg.Client;
  try {
    await viaRouter.connect();
    connected = direct = await plain.connect();
  } catch (e) {
    await dispose();
    throw e;
  }
  const pair: DifferentialPair = {
    cluster,
    plain,
    viaRouter,
    direct: connected,
    async both(statements) {
      for (const sql of statements) {
        await connected.query(sql);
        await viaRouter.query(sql);
      }
    },
    dispose,
  };
  await pair.both(setup);
  return pair;
}
