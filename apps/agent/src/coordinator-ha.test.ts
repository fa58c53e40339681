// Two coordinator processes over one catalog. SIGKILL the active one: the standby serves within
// 5 s, every client holding the list of both addresses (agents, an admin client, a catalog
// watcher) follows it with no configuration change, no catalog change or 2PC decision is lost,
// and the primary keeps committing throughout (its lease holds, or its failsafe does).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinatorService, Decision, TxnService, createClient } from '@tessera/proto';
import { addr, hasSyncReplica, startHaCluster, type HaCluster } from './testing/ha-cluster.js';
import { missing, startWriters } from './testing/writers.js';

let c: HaCluster;
before(async () => {
  c = await startHaCluster({ processCoordinators: true, coordinators: 2 });
  await (await c.primary()).query('create table t (id int primary key)');
});
after(() => c?.dispose());

test(
  'SIGKILL of the active coordinator: the standby serves within 5 s and every client follows it',
  { timeout: 180_000 },
  async (t) => {
    await c.waitNode(hasSyncReplica, 60_000, 'a synchronous replica');
    const list = c.coordinatorList();
    const who = createClient(CoordinatorService, list, { deadlineMs: 5_000 });
    const txn = createClient(TxnService, list, { deadlineMs: 5_000 });
    try {
      const active = (await who.getActiveCoordinator({})).address;
      const dying = c.coordinators.find((x) => x.address === active)!;
      const standby = c.coordinators.find((x) => x.address !== active)!;
      assert.ok(dying && standby);
      const primaryBefore = addr(await c.node());
      await txn.decide({ txid: 'ha-test-1', decision: Decision.COMMIT, participants: ['d1'] });
      const epochBefore = (await c.catalog.getCatalog({})).epoch;
      const writers = startWriters(c, 2);
      await sleep(1_000);

      const killedAt = performance.now();
      dying.kill();
      let servedMs = 0;
      for (;;) {
        try {
          const cat = await c.catalog.getCatalog({}, { deadlineMs: 1_000 });
          servedMs = performance.now() - killedAt;
          assert.ok(cat.epoch >= epochBefore, 'no catalog change was lost');
          break;
        } catch {
          assert.ok(performance.now() - killedAt < 15_000, 'the standby never took over');
          await sleep(50);
        }
      }
      t.diagnostic(`the standby served ${Math.round(servedMs)} ms after the SIGKILL`);
      assert.ok(servedMs <= 5_000, `the standby served only after ${servedMs} ms`);
      assert.equal((await who.getActiveCoordinator({})).address, standby.address);

      // The same clients work: a change, a decision read back, agents reporting to the new one.
      const change = await c.admin.addReplica({ name: 'home', host: '127.0.0.1', port: 1 });
      assert.ok(change.epoch > epochBefore);
      assert.equal((await txn.getDecision({ txid: 'ha-test-1' })).decision, Decision.COMMIT);
      const deadline = performance.now() + 10_000;
      for (;;) {
        const h = await c.health.getHealth({});
        const fresh = h.agents.filter((a) => a.ageMs < 2_000n && a.report?.node === 'd1');
        if (fresh.length === 2) break;
        assert.ok(performance.now() < deadline, 'the agents did not follow to the new coordinator');
        await sleep(100);
      }
      await sleep(2_000);
      await writers.stop();
      assert.equal(addr(await c.node()), primaryBefore, 'no failover happened');
      const gap = Math.max(
        ...writers.acks.slice(1).map((a, i) => (a.at > killedAt ? a.at - writers.acks[i]!.at : 0)),
      );
      t.diagnostic(`longest gap between acknowledged writes after the kill: ${Math.round(gap)} ms`);
      assert.ok(
        writers.acks.some((a) => a.at > killedAt + servedMs),
        'the primary kept committing',
      );
      assert.deepEqual(await missing(await c.primary(), writers.acked), []);
      for (const line of dying.lines.concat(standby.lines)) JSON.parse(line);
    } finally {
      who.close();
      txn.close();
    }
  },
);
