// The router the failover suite's router writers go through, over the failover cluster: a real
// router process following the coordinators, a keyspace whose ranges all live on data1 with a
// sharded table `rt` in it, and `gt`, a table the catalog does not name (global: the home node's),
// both created through the router. Its /metrics are read around each kill for what it held.
import { freePort } from '@tessera/pgctl';
import { KeyType } from '@tessera/proto';
import pg from 'pg';
import { startRouter } from '../targets/router.js';
import type { Target } from '../targets/target.js';
import type { FailoverCluster, NodeName } from './failover-cluster.js';
import { parseHoldCounters, type HoldCounters } from './failover-held.js';

/** The router writers' table per node: its rows live on that node. */
export const ROUTER_TABLES: Record<NodeName, string> = { home: 'gt', data1: 'rt' };

export interface FailoverRouter {
  target: Target;
  address: string;
  holdCounters(): Promise<HoldCounters>;
  stop(): Promise<void>;
}

export async function startFailoverRouter(
  cluster: FailoverCluster,
  clients: number,
): Promise<FailoverRouter> {
  await cluster.admin.createKeyspace({ name: 'fo', keyType: KeyType.BIGINT, ranges: 2, seed: 0n });
  await cluster.admin.distributeTable({
    schema: 'public',
    name: ROUTER_TABLES.data1,
    keyColumn: 'id',
    keyspace: 'fo',
  });
  const metricsPort = await freePort();
  const s = await startRouter({
    name: 'router',
    coordinator: cluster.coordinatorList,
    poolSize: clients,
    poolMode: 'transaction',
    maxClients: clients * 4,
    metricsPort,
  });
  if (!s.ok) throw new Error(s.reason);
  const target = s.target;
  const address = `${target.host}:${target.port}`;
  try {
    const c = new pg.Client({ connectionString: `postgresql://postgres@${address}/postgres` });
    await c.connect();
    try {
      for (const table of Object.values(ROUTER_TABLES))
        await c.query(`create table ${table} (id bigint primary key)`);
    } finally {
      await c.end();
    }
  } catch (e) {
    await target.stop();
    throw e;
  }
  return {
    target,
    address,
    holdCounters: async () => {
      const r = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
        signal: AbortSignal.timeout(5_000),
      });
      if (!r.ok) throw new Error(`the router's /metrics answered ${r.status}`);
      return parseHoldCounters(await r.text());
    },
    stop: () => target.stop(),
  };
}
