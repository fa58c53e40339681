// The home node, which holds the catalog database, loses its primary. The coordinator that was
// active keeps its agents, fails the home node over to its synchronous replica, follows the
// catalog there (its URL names both servers), and records the new home address; catalog changes
// and 2PC decisions work afterwards, and nothing the catalog had is lost.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Decision, TxnService, createClient } from '@tessera/proto';
import { addr, hasSyncReplica, startHaCluster, type HaCluster } from './testing/ha-cluster.js';

let c: HaCluster;
before(async () => {
  c = await startHaCluster({ homeReplica: true });
});
after(() => c?.dispose());

test(
  'SIGKILL of the home primary: the catalog moves to its replica and the coordinator follows',
  { timeout: 180_000 },
  async (t) => {
    await c.waitNode(hasSyncReplica, 60_000, 'a synchronous home replica', 'home');
    await c.waitNode(hasSyncReplica, 60_000, 'a synchronous d1 replica');
    const txn = createClient(TxnService, c.coordinatorList(), { deadlineMs: 5_000 });
    try {
      await txn.decide({ txid: 'home-1', decision: Decision.ABORT, participants: ['d1'] });
      const before = await c.catalog.getCatalog({});
      const oldHome = addr(await c.node('home'));
      const killedAt = performance.now();
      await c.servers.get(oldHome)!.stop('kill');
      const moved = await c.waitNode(
        (n) => addr(n) !== oldHome && !n.failingOver,
        30_000,
        'the new home address',
        'home',
      );
      const ms = performance.now() - killedAt;
      t.diagnostic(
        `the catalog served the new home address ${Math.round(ms)} ms after the SIGKILL`,
      );
      assert.ok(ms <= 10_000, `took ${ms} ms`);
      const after = await c.catalog.getCatalog({});
      assert.ok(after.epoch > before.epoch);
      assert.equal(after.clusterUid, before.clusterUid);
      assert.deepEqual(
        after.nodes.map((n) => n.name),
        before.nodes.map((n) => n.name),
      );
      assert.ok(
        moved.replicas.some((r) => addr(r) === oldHome),
        'the former home primary is kept fenced',
      );
      // The catalog takes changes and decisions on its new server.
      assert.ok(
        (await c.admin.addReplica({ name: 'd1', host: '127.0.0.1', port: 2 })).epoch > after.epoch,
      );
      assert.equal((await txn.getDecision({ txid: 'home-1' })).decision, Decision.ABORT);
      await txn.decide({ txid: 'home-2', decision: Decision.COMMIT, participants: ['d1'] });
      assert.equal((await txn.getDecision({ txid: 'home-2' })).decision, Decision.COMMIT);
    } finally {
      txn.close();
    }
  },
);
