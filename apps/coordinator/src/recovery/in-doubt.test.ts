// In-doubt transactions on real nodes: listed by this cluster's gid prefix from pg_prepared_xacts,
// resolved by the decision log, undecided ones aborted only after the grace period (at once when
// Resolve names the txid), and a node that is down skipped rather than failing the call.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Decision, NodeRole } from '@tessera/proto';
import {
  freshDatabase,
  startPostgres,
  startTestCoordinator,
  type PgServer,
  type TestCoordinator,
} from '../testing.js';

let server: PgServer;
let t: TestCoordinator;
before(async () => {
  server = await startPostgres({ name: 'indoubt' });
  t = await startTestCoordinator(await freshDatabase(server), {
    recoveryGraceMs: 1500,
    recoveryIntervalMs: 0, // this test drives Resolve by hand
  });
  await t.admin.addNode({ name: 'n1', host: '127.0.0.1', port: server.port, role: NodeRole.HOME });
  await t.admin.addNode({ name: 'down', host: '127.0.0.1', port: 1 });
  await server.query('create database shard');
  await server.query('create table items (id int primary key)', [], 'shard');
});
after(async () => {
  await t.stop();
  await server.query(`select gid from pg_prepared_xacts`).then(async (rows) => {
    for (const r of rows)
      await server
        .query(`rollback prepared '${String(r['gid'])}'`, [], 'shard')
        .catch(() => undefined);
  });
  await server.dispose();
});

async function prepare(gid: string, id: number): Promise<void> {
  const c = await server.connect('shard');
  try {
    await c.query('begin');
    await c.query('insert into items values ($1)', [id]);
    await c.query(`prepare transaction '${gid}'`);
  } finally {
    await c.end();
  }
}

test('ListInDoubt and Resolve follow the log; undecided transactions wait out the grace period', async () => {
  const { clusterUid } = await t.catalog.getCatalog({});
  const gid = (txid: string) => `tessera:${clusterUid}:${txid}:n1`;
  await prepare(gid('tx-c'), 1);
  await prepare(gid('tx-a'), 2);
  await prepare(gid('tx-u'), 3);
  await prepare('someone-else:1', 4);
  await t.txn.decide({ txid: 'tx-c', decision: Decision.COMMIT, participants: ['n1'] });
  await t.txn.decide({ txid: 'tx-a', decision: Decision.ABORT, participants: ['n1'] });

  const { txns } = await t.txn.listInDoubt({});
  const byGid = new Map(txns.map((x) => [x.gid, x]));
  assert.equal(txns.length, 3, 'only this cluster, and the down node is skipped');
  assert.equal(byGid.get(gid('tx-c'))?.decision, Decision.COMMIT);
  assert.equal(byGid.get(gid('tx-a'))?.decision, Decision.ABORT);
  assert.equal(byGid.get(gid('tx-u'))?.decision, Decision.UNSPECIFIED);
  assert.equal(byGid.get(gid('tx-u'))?.node, 'n1');

  const first = await t.txn.resolve({});
  assert.deepEqual([first.committed, first.rolledBack], [1, 1]);
  const rows = await server.query<{ id: number }>('select id from items order by id', [], 'shard');
  assert.deepEqual(
    rows.map((r) => r.id),
    [1],
  );

  await sleep(1600);
  const second = await t.txn.resolve({ txid: 'tx-u' });
  assert.deepEqual([second.committed, second.rolledBack], [0, 1]);
  assert.equal(
    (await t.txn.getDecision({ txid: 'tx-u' })).decision,
    Decision.ABORT,
    'the abort was logged first',
  );
  const left = await server.query<{ gid: string }>('select gid from pg_prepared_xacts');
  assert.deepEqual(
    left.map((r) => r.gid),
    ['someone-else:1'],
  );
});

test('Resolve with a txid forces it now: an undecided one is aborted without waiting for grace', async () => {
  const { clusterUid } = await t.catalog.getCatalog({});
  await prepare(`tessera:${clusterUid}:tx-f:n1`, 5);
  const res = await t.txn.resolve({ txid: 'tx-f' });
  assert.deepEqual([res.committed, res.rolledBack], [0, 1]);
  assert.equal((await t.txn.getDecision({ txid: 'tx-f' })).decision, Decision.ABORT);
  const again = await t.txn.resolve({ txid: 'tx-f' });
  assert.deepEqual([again.committed, again.rolledBack], [0, 0], 'nothing left to do');
});
