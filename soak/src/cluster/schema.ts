// The soak schema, declared the way an operator would: nodes registered and keyspaces and
// sharded tables declared through the coordinator, then CREATE TABLE through a router (which
// creates each table on the nodes with its fence). The ledger is colocated with its counter,
// a transfer's legs with their accounts.
import { buildSnapshot, type Snapshot } from '@tessera/keyspace';
import { KeyType, NodeRole, catalogFromMessage, type Catalog } from '@tessera/proto';
import type pg from 'pg';
import { TABLES } from '../checker/values.js';
import type { Cluster } from './cluster.js';
import { retrySetup } from './setup-retry.js';

/** How long one setup step may keep being retried on a loaded machine. */
const SETUP_STEP_TIMEOUT_MS = 180_000;

/** A coordinator call of the setup, retried across a change of the active coordinator. */
function viaCoordinator<T>(cluster: Cluster, what: string, call: () => Promise<T>) {
  return retrySetup(call, {
    what,
    timeoutMs: SETUP_STEP_TIMEOUT_MS,
    log: (l) => cluster.events.log(l),
    beforeRetry: () => cluster.vip.waitForLeader(60_000),
  });
}

export const KEYSPACES = [
  { name: TABLES.lists.keyspace, seed: 0n },
  { name: TABLES.counters.keyspace, seed: 17n },
  { name: TABLES.accounts.keyspace, seed: 4242n },
] as const;

const DDL: Record<keyof typeof TABLES, string> = {
  lists: 'create table lists (k bigint primary key, vals bigint[] not null)',
  counters: 'create table counters (k bigint primary key, n bigint not null)',
  ledger:
    'create table ledger (k bigint not null, op_id bigint not null, d bigint not null, primary key (k, op_id))',
  accounts:
    'create table accounts (id bigint primary key, balance bigint not null check (balance >= 0))',
  legs: 'create table legs (account_id bigint not null, transfer_id bigint not null, amount bigint not null, primary key (account_id, transfer_id))',
};

export async function declareSchema(cluster: Cluster, rangesPerKeyspace: number): Promise<void> {
  for (const n of cluster.nodes) {
    const replica = n.others[0];
    await viaCoordinator(cluster, `AddNode ${n.name}`, () =>
      cluster.admin.addNode({
        name: n.name,
        host: n.catalogAddress.host,
        port: n.catalogAddress.port,
        role: n.role === 'home' ? NodeRole.HOME : NodeRole.DATA,
        // Named as its base backup streams (the name the catalog would derive from its address).
        ...(replica
          ? {
              replicaHost: replica.catalogAddress.host,
              replicaPort: replica.catalogAddress.port,
              replicaName: replica.applicationName,
            }
          : {}),
      }),
    );
  }
  await cluster.startAgents();
  for (const k of KEYSPACES)
    await viaCoordinator(cluster, `CreateKeyspace ${k.name}`, () =>
      cluster.admin.createKeyspace({
        name: k.name,
        keyType: KeyType.BIGINT,
        ranges: rangesPerKeyspace,
        seed: k.seed,
      }),
    );
  for (const t of Object.values(TABLES))
    await viaCoordinator(cluster, `DistributeTable ${t.name}`, () =>
      cluster.admin.distributeTable({
        schema: 'public',
        name: t.name,
        keyColumn: t.key,
        keyspace: t.keyspace,
      }),
    );
}

/** One step through router0 on a connection of its own, retried (see setup-retry.ts). */
async function viaRouter<T>(
  cluster: Cluster,
  what: string,
  step: (c: pg.Client) => Promise<T>,
): Promise<T | undefined> {
  return retrySetup(
    async () => {
      const c = await cluster.routerClient(cluster.routers[0]!, 30_000);
      try {
        return await step(c);
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    { what, timeoutMs: SETUP_STEP_TIMEOUT_MS, log: (l) => cluster.events.log(l) },
  );
}

/** CREATE TABLE of every soak table through a router. */
export async function createTables(cluster: Cluster): Promise<void> {
  for (const [name, ddl] of Object.entries(DDL))
    await viaRouter(cluster, `create table ${name}`, (c) => c.query(ddl));
}

/**
 * Account ids spread evenly over the data nodes (by the catalog's ranges): the first ids that
 * hash to each node in turn, so transfers cross nodes about as often as they can.
 */
export function bankAccounts(
  snapshot: Snapshot,
  dataNodes: readonly string[],
  count: number,
): number[] {
  const per = new Map(dataNodes.map((n) => [n, [] as number[]]));
  const want = Math.ceil(count / dataNodes.length);
  for (let id = 1; [...per.values()].some((l) => l.length < want) && id < 100_000; id++) {
    const owner = snapshot.ownerOfKey(TABLES.accounts.keyspace, String(id));
    const list = per.get(owner);
    if (list && list.length < want) list.push(id);
  }
  const out: number[] = [];
  for (let i = 0; out.length < count; i++)
    for (const n of dataNodes)
      if (out.length < count && per.get(n)![i] !== undefined) out.push(per.get(n)![i]!);
  return out.sort((a, b) => a - b);
}

/** Creates the accounts through a router (one INSERT split over the nodes) and reads them back. */
export async function createAccounts(
  cluster: Cluster,
  ids: readonly number[],
  balance: number,
): Promise<[number, number][]> {
  const values = ids.map((id) => `(${id}, ${balance})`).join(', ');
  await viaRouter(cluster, 'insert the accounts', (c) =>
    c.query(`insert into accounts (id, balance) values ${values}`),
  );
  const rows = await viaRouter(cluster, 'read the accounts back', (c) =>
    c.query<{ id: string; balance: string }>('select id, balance from accounts order by id'),
  );
  const got = (rows?.rows ?? []).map((r) => [Number(r.id), Number(r.balance)] as [number, number]);
  if (got.length !== ids.length || got.some(([id, b], i) => id !== ids[i] || b !== balance))
    throw new Error(
      `the accounts read back through the router differ from those written: ${JSON.stringify(got)}`,
    );
  return got;
}

export function snapshotOf(catalog: Catalog): Snapshot {
  return buildSnapshot(catalogFromMessage(catalog));
}
