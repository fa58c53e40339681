// Test helper (not exported): three real Postgres nodes with an `app` database, a catalog that
// lists them and a coordinator process over it (testcluster's attachCluster), plus the
// participants and checks the 2PC tests share. The table `rows (txid, node)` gets one row per
// node per transaction.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Code, Decision, RpcError, TxnService, createClient, type Client } from '@tessera/proto';
import { attachCluster } from '@tessera/testcluster';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import { sqlParticipant, type Participant } from '../participant.js';
import { coordinatorLauncher, type CoordinatorProcess } from './coordinator-process.js';

export const NODES = ['n1', 'n2', 'n3'] as const;
export const GRACE_MS = 1000;
export const INTERVAL_MS = 150;
/** application_name of the kill matrix's child sessions. */
export const CHILD_APP = 'twopc-kill-child';

export interface Nodes {
  servers: PgServer[];
  dispose(): Promise<void>;
}

/** Three nodes, each with database `app` holding `rows` and a deferrable unique table `u`. */
export async function startNodes(name: string): Promise<Nodes> {
  const servers = await startPostgresCluster(3, { name });
  for (const s of servers) {
    await s.query('create database app');
    await s.query('create table rows (txid text not null, node text not null)', [], 'app');
    await s.query(
      'create table u (k int, constraint u_k unique (k) deferrable initially deferred)',
      [],
      'app',
    );
  }
  return {
    servers,
    dispose: async () => {
      for (const s of servers) {
        const left = await s
          .query<{ gid: string }>('select gid from pg_prepared_xacts')
          .catch(() => []);
        for (const r of left)
          await s.query(`rollback prepared '${r.gid}'`, [], 'app').catch(() => undefined);
        await s.dispose();
      }
    },
  };
}

/** A catalog database (a fresh cluster uid), its coordinator process, the nodes registered. */
export interface Catalog {
  url: string;
  clusterUid: string;
  coordinator: CoordinatorProcess;
  txn: Client<typeof TxnService>;
  close(): Promise<void>;
}

let catalogs = 0;

/**
 * A catalog database of its own and a coordinator on it. `graceMs`: how long its recovery leaves
 * an undecided prepared transaction alone (GRACE_MS, short, for the tests of recovery; a test of
 * something else gives a long one, so that a slow machine does not turn its commit into recovery's
 * abort).
 */
export async function startCatalog(
  nodes: Nodes,
  label: string,
  graceMs = GRACE_MS,
): Promise<Catalog> {
  const [home, ...data] = nodes.servers as [PgServer, ...PgServer[]];
  const tessera = await attachCluster(home, data, {
    launch: coordinatorLauncher({ graceMs, intervalMs: INTERVAL_MS }),
    catalogDatabase: `catalog_${label}_${process.pid}_${catalogs++}`,
    nodeNames: NODES,
    clientDeadlineMs: 10_000,
  });
  const { clusterUid } = await tessera.catalog.getCatalog({});
  const txn = createClient(TxnService, tessera.coordinator.address, { deadlineMs: 10_000 });
  return {
    url: tessera.catalogUrl,
    clusterUid,
    coordinator: tessera.coordinator,
    txn,
    close: async () => {
      txn.close();
      await tessera.dispose();
    },
  };
}

/** A transaction open on every node (one `rows` row each), and its participants. */
export interface OpenTxn {
  clients: pg.Client[];
  participants: Participant[];
  end(): Promise<void>;
}

export async function openTxn(
  nodes: Nodes,
  txid: string,
  extra?: (client: pg.Client, node: string) => Promise<void>,
): Promise<OpenTxn> {
  const clients = await Promise.all(
    nodes.servers.map(async (s) => {
      const c = new pg.Client({ connectionString: s.url('app'), application_name: 'twopc-test' });
      c.on('error', () => undefined); // a node stopped by a test surfaces as a query's rejection
      await c.connect();
      return c;
    }),
  );
  for (const [i, c] of clients.entries()) {
    const node = NODES[i] as string;
    await c.query('begin');
    await c.query('insert into rows values ($1, $2)', [txid, node]);
    await extra?.(c, node);
  }
  return {
    clients,
    participants: clients.map((c, i) => sqlParticipant(NODES[i] as string, (sql) => c.query(sql))),
    end: async () => void (await Promise.all(clients.map((c) => c.end().catch(() => undefined)))),
  };
}

/** How many nodes hold `txid`'s row. */
export async function appliedOn(nodes: Nodes, txid: string): Promise<number> {
  const counts = await Promise.all(
    nodes.servers.map((s) =>
      s.query<{ n: string }>('select count(*)::text as n from rows where txid = $1', [txid], 'app'),
    ),
  );
  return counts.reduce((sum, rows) => sum + Number(rows[0]?.n ?? 0), 0);
}

/** The gids still prepared for `txid` (every cluster). */
export async function preparedFor(nodes: Nodes, txid: string): Promise<string[]> {
  const all = await Promise.all(
    nodes.servers.map((s) =>
      s.query<{ gid: string }>('select gid from pg_prepared_xacts where gid like $1', [
        `%:${txid}:%`,
      ]),
    ),
  );
  return all
    .flat()
    .map((r) => r.gid)
    .sort();
}

/** Sessions on any node whose application_name is `app` (e.g. a killed child's, still closing). */
export async function sessionsOf(nodes: Nodes, app: string): Promise<number> {
  const all = await Promise.all(
    nodes.servers.map((s) =>
      s.query<{ n: string }>(
        'select count(*)::text as n from pg_stat_activity where application_name = $1',
        [app],
      ),
    ),
  );
  return all.reduce((sum, rows) => sum + Number(rows[0]?.n ?? 0), 0);
}

/** The logged decision, or 'none'. */
export async function loggedDecision(
  txn: Client<typeof TxnService>,
  txid: string,
): Promise<'commit' | 'abort' | 'none'> {
  try {
    const r = await txn.getDecision({ txid });
    return r.decision === Decision.COMMIT ? 'commit' : 'abort';
  } catch (e) {
    if (e instanceof RpcError && e.code === Code.NOT_FOUND) return 'none';
    throw e;
  }
}

export async function until(
  what: string,
  cond: () => Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}
