// startCluster and attachCluster against real Postgres and a real coordinator. This library may
// not import the coordinator (an app), so the test runs it the way the 2PC tests do: as a child
// process from its TypeScript sources, through coordinatorProcess.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { KeyType, NodeRole, TableKind, declareShape } from '@tessera/proto';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import {
  attachCluster,
  coordinatorProcess,
  startCluster,
  type Cluster,
  type CoordinatorProcess,
} from './index.js';

const COORDINATOR_MAIN = fileURLToPath(
  new URL('../../../apps/coordinator/src/main.ts', import.meta.url),
);
const launch = coordinatorProcess({
  entry: ['--conditions=development', '--import', 'tsx', COORDINATOR_MAIN],
  args: ['--standby-poll-ms', '100'],
});

const SHAPE = {
  keyspaces: [{ name: 'tenants', keyType: KeyType.BIGINT, ranges: 4, seed: 7n }],
  tables: [
    { kind: 'sharded', name: 'orders', keyspace: 'tenants', keyColumn: 'tenant_id' },
    { kind: 'reference', name: 'countries' },
  ],
} as const;

let cluster: Cluster<CoordinatorProcess>;

before(async () => {
  cluster = await startCluster({ name: 'testcluster', spareNodes: 1, launch, ...SHAPE });
});
after(async () => {
  await cluster?.dispose();
});

test('the nodes are registered by name, the spare is not, and the shape is declared', async () => {
  const { nodes, keyspaces, ranges, tables } = await cluster.catalog.getCatalog({});
  const [home, data1, data2] = cluster.servers;
  assert.deepEqual(Object.fromEntries(nodes.map((n) => [n.name, [n.port, n.role]])), {
    home: [home!.port, NodeRole.HOME],
    data1: [data1!.port, NodeRole.DATA],
    data2: [data2!.port, NodeRole.DATA],
  });
  assert.deepEqual([...cluster.byName.keys()], ['home', 'data1', 'data2']);
  assert.equal(cluster.spares.length, 1);
  assert.ok(!nodes.some((n) => n.port === cluster.spares[0]!.port));
  assert.deepEqual(
    keyspaces.map((k) => [k.name, k.keyType, k.seed]),
    [['tenants', KeyType.BIGINT, 7n]],
  );
  assert.equal(ranges.filter((r) => r.keyspace === 'tenants').length, 4);
  assert.deepEqual(tables.map((t) => [t.name, t.kind]).sort(), [
    ['countries', TableKind.REFERENCE],
    ['orders', TableKind.SHARDED],
  ]);
  const dbs = await cluster.home.query('select 1 from pg_database where datname = $1', [
    'tessera_catalog',
  ]);
  assert.equal(dbs.length, 1, 'the catalog lives on home');
});

test('declaring the same shape again changes nothing (the epoch stays)', async () => {
  const before = await cluster.catalog.getCatalog({});
  const again = await declareShape(cluster, SHAPE);
  assert.equal(again.epoch, before.epoch);
});

test('restartCoordinator: a new process on the same address and catalog', async () => {
  const first = cluster.coordinator;
  const { epoch } = await cluster.catalog.getCatalog({});
  const second = await cluster.restartCoordinator({ downMs: 50 });
  assert.notEqual(second, first);
  assert.equal(cluster.coordinator, second);
  assert.equal(second.address, first.address);
  assert.notEqual(first.child.exitCode ?? first.child.signalCode, null, 'the first one is gone');
  // The clients made at the start reconnect to it.
  assert.equal((await cluster.catalog.getCatalog({})).epoch, epoch);
});

test('attachCluster: servers the caller runs, its own node names and catalog database', async () => {
  const servers = await startPostgresCluster(2, { name: 'testcluster-attach' });
  try {
    const [home, data] = servers as [PgServer, PgServer];
    const t = await attachCluster(home, [data], {
      launch,
      nodeNames: ['n1', 'n2'],
      catalogDatabase: 'catalog_attach',
      clientDeadlineMs: 10_000,
    });
    const { nodes } = await t.catalog.getCatalog({});
    assert.deepEqual(nodes.map((n) => `${n.name}:${n.port}`).sort(), [
      `n1:${home.port}`,
      `n2:${data.port}`,
    ]);
    assert.equal(t.catalogUrl, home.url('catalog_attach'));
    await t.dispose();
    assert.notEqual(t.coordinator.child.exitCode ?? t.coordinator.child.signalCode, null);
    // The servers are the caller's: still running.
    assert.equal((await data.query('select 1 as one'))[0]?.['one'], 1);
  } finally {
    await Promise.all(servers.map((s) => s.dispose()));
  }
});

test('a shape the coordinator refuses: the call rejects and the coordinator is stopped', async () => {
  const [home] = (await startPostgresCluster(1, { name: 'testcluster-refused' })) as [PgServer];
  let launched: CoordinatorProcess | undefined;
  try {
    await assert.rejects(
      attachCluster(home, [], {
        launch: async (at) => (launched = await launch(at)),
        tables: [{ kind: 'sharded', name: 't', keyspace: 'missing', keyColumn: 'id' }],
      }),
    );
    assert.ok(launched);
    assert.notEqual(launched.child.exitCode ?? launched.child.signalCode, null);
  } finally {
    await home.dispose();
  }
});

test('dispose stops the coordinator and removes the servers', async () => {
  const c = await startCluster({ name: 'testcluster-dispose', dataNodes: 1, launch });
  await c.dispose();
  assert.notEqual(c.coordinator.child.exitCode ?? c.coordinator.child.signalCode, null);
  await assert.rejects(c.home.query('select 1'));
});
