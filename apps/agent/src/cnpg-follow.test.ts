// CloudNativePG mode against recorded Cluster documents (cnpg-testdata/; Kubernetes cannot run
// here) and real Postgres instances named as its pods would be: pg-1 primary, pg-2 synchronous,
// pg-3 asynchronous (FIRST 1 ("pg-2", "pg-3")). The agents read the document from a file, as a
// `kubectl get cluster -o json -w` sidecar would write it. Tessera records pg-2 in its sync set
// from pg-1's pg_stat_replication, holds while the operator fails over, follows the promotion of
// pg-2, and refuses to follow a promotion of pg-3, which is outside the recorded set.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCoordinator, type RunningCoordinator } from '@tessera/coordinator';
import {
  AdminService,
  AgentService,
  CatalogService,
  HaMode,
  NodeRole,
  ReplicaState,
  createClient,
  type Node,
} from '@tessera/proto';
import {
  REPLICATION_SETTINGS,
  setSynchronousStandbys,
  startPostgres,
  startReplica,
  waitForStreaming,
  type PgServer,
} from '@tessera/testkit';
import { startAgent, type RunningAgent } from './agent.js';
import { parseConfig } from './config.js';
import { addr, quiet } from './testing/ha-cluster.js';

let dir: string;
let statusFile: string;
let catalogServer: PgServer;
let servers: PgServer[] = [];
let coordinator: RunningCoordinator;
const agents: RunningAgent[] = [];

function publish(doc: string): void {
  // Written whole (rename), as a watcher sidecar would.
  const tmp = `${statusFile}.tmp`;
  copyFileSync(new URL(`./cnpg-testdata/${doc}`, import.meta.url), tmp);
  renameSync(tmp, statusFile);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-cnpg-'));
  statusFile = join(dir, 'cluster.json');
  publish('1-healthy.json');
  catalogServer = await startPostgres({ name: 'catalog' });
  await catalogServer.query('create database tessera');
  const pg1 = await startPostgres({ name: 'pg-1', settings: { ...REPLICATION_SETTINGS } });
  const pg2 = await startReplica(pg1, { name: 'pg-2', applicationName: 'pg-2' });
  const pg3 = await startReplica(pg1, { name: 'pg-3', applicationName: 'pg-3' });
  servers = [pg1, pg2, pg3];
  await setSynchronousStandbys(pg1, ['"pg-2"', '"pg-3"']);
  await waitForStreaming(pg1, [pg2, pg3], true);
  coordinator = await startCoordinator(
    {
      catalogUrl: catalogServer.url('tessera'),
      listen: '127.0.0.1:0',
      metricsPort: 0,
      standbyPollMs: 200,
      recoveryGraceMs: 5_000,
    },
    { log: quiet() },
  );
  await coordinator.whenActive;
  const admin = createClient(AdminService, coordinator.address);
  try {
    await admin.addNode({
      name: 'home',
      host: catalogServer.host,
      port: catalogServer.port,
      role: NodeRole.HOME,
    });
    await admin.addNode({
      name: 'd1',
      host: pg1.host,
      port: pg1.port,
      role: NodeRole.DATA,
      haMode: HaMode.CNPG,
    });
    await admin.addReplica({ name: 'd1', host: pg2.host, port: pg2.port, replicaName: 'pg-2' });
    await admin.addReplica({ name: 'd1', host: pg3.host, port: pg3.port, replicaName: 'pg-3' });
  } finally {
    admin.close();
  }
  const map = servers.map((s, i) => `pg-${i + 1}=${addr(s)}`).join(',');
  for (const [i, s] of servers.entries()) {
    const parsed = parseConfig(
      [
        '--coordinator',
        coordinator.address,
        '--node',
        'd1',
        '--pg-url',
        s.url(),
        '--mode',
        'cnpg',
        '--cnpg-cluster-file',
        statusFile,
        '--cnpg-address-map',
        map,
        '--name',
        `pg-${i + 1}`,
        '--probe-interval-ms',
        '200',
        '--report-interval-ms',
        '400',
        '--metrics-port',
        '0',
      ],
      {},
    );
    if (parsed.help) throw new Error('unreachable');
    agents.push(await startAgent(parsed.config, { log: quiet() }));
  }
});

after(async () => {
  for (const a of agents) await a.stop();
  await coordinator?.stop();
  for (const s of servers) await s.dispose();
  await catalogServer?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function waitNode(
  pred: (n: Node) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<Node> {
  const catalog = createClient(CatalogService, coordinator.address);
  try {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const n = (await catalog.getCatalog({})).nodes.find((x) => x.name === 'd1')!;
      if (pred(n)) return n;
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  } finally {
    catalog.close();
  }
}

test(
  'follows the operator to the recorded sync replica, refuses an instance outside the set',
  { timeout: 120_000 },
  async () => {
    const [pg1, pg2, pg3] = servers as [PgServer, PgServer, PgServer];
    const stateOf = (n: Node, s: PgServer) => n.replicas.find((r) => r.port === s.port)?.state;
    await waitNode(
      (n) => stateOf(n, pg2) === ReplicaState.SYNC && stateOf(n, pg3) === ReplicaState.CATCHING_UP,
      'pg-2 recorded sync from pg_stat_replication, pg-3 not',
    );
    await pg1.query('create table t (id int primary key)');
    await pg1.query('insert into t select generate_series(1, 100)');

    publish('2-failing-over.json');
    await waitNode((n) => n.failingOver, 'routers told to hold while the operator fails over');

    await pg1.stop('kill');
    await pg2.query('select pg_promote(true, 60)');
    publish('3-promoted.json');
    const moved = await waitNode(
      (n) => addr(n) === addr(pg2) && !n.failingOver,
      'the promoted pg-2 in the catalog',
    );
    assert.ok(
      moved.replicas.some((r) => r.port === pg1.port),
      'pg-1 is kept as a replica (the operator rejoins it)',
    );
    const [{ n } = { n: '' }] = await pg2.query<{ n: string }>('select count(*)::text as n from t');
    assert.equal(n, '100');

    publish('4-promoted-async.json');
    const health = createClient(AgentService, coordinator.address);
    try {
      const deadline = performance.now() + 15_000;
      let reason = '';
      while (performance.now() < deadline) {
        const h = await health.getHealth({});
        reason = h.nodes.find((x) => x.node === 'd1')?.failover ?? '';
        if (/refusing to follow/.test(reason)) break;
        await sleep(100);
      }
      assert.match(
        reason,
        /refusing to follow CloudNativePG's promotion of 127\.0\.0\.1:\d+: it is not in the recorded sync set/,
      );
      const still = await waitNode(() => true, 'the node');
      assert.equal(addr(still), addr(pg2), 'the catalog still names pg-2');
    } finally {
      health.close();
    }
  },
);
