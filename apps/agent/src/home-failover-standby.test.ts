// The home node's primary dies and the standby coordinator, not the one that was active, wins the
// leader lock on the promoted catalog server. The old active one still holds every agent's report
// stream (it kept them to fail the home node over); it must hand them over at once, or the new
// active coordinator sees no agent and the failover stalls until the interim runs out.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinatorService, Decision, TxnService, createClient } from '@tessera/proto';
import { addr, hasSyncReplica, startHaCluster, type HaCluster } from './testing/ha-cluster.js';
import { missing, startWriters } from './testing/writers.js';

/** Generous: the machine runs other suites at the same time. */
const WAIT_MS = 30_000;
/** Well under the old active coordinator's interim (15 s), which the stall used to last. */
const BOUND_MS = 10_000;

let c: HaCluster;
before(async () => {
  // The active coordinator polls the lock slowly, so after the kill the standby (polling every
  // 100 ms) is the one that takes it on the promoted server.
  c = await startHaCluster({ homeReplica: true, coordinators: 2, coordinatorPollMs: [1_000, 100] });
  await c.catalogServer.query('create table t (id int primary key)');
});
after(() => c?.dispose());

test(
  'home primary killed and the standby coordinator wins: the agents follow it and writes, catalog changes and 2PC work again',
  { timeout: 240_000 },
  async (t) => {
    await c.waitNode(hasSyncReplica, 60_000, 'a synchronous home replica', 'home');
    await c.waitNode(hasSyncReplica, 60_000, 'a synchronous d1 replica');
    const list = c.coordinatorList();
    const who = createClient(CoordinatorService, list, { deadlineMs: 5_000 });
    const txn = createClient(TxnService, list, { deadlineMs: 5_000 });
    const writers = startWriters({ primary: () => c.primary('home') }, 2);
    try {
      const [first, second] = c.coordinators;
      assert.equal((await who.getActiveCoordinator({})).address, first!.address);
      await sleep(1_000);
      const oldHome = addr(await c.node('home'));
      const killedAt = performance.now();
      await c.servers.get(oldHome)!.stop('kill');

      const moved = await c.waitNode(
        (n) => addr(n) !== oldHome && !n.failingOver,
        WAIT_MS,
        'the new home address',
        'home',
      );
      const movedMs = performance.now() - killedAt;
      const firstAck = (): number | undefined =>
        writers.acks.find((a) => a.at > killedAt && a.server === addr(moved))?.at;
      while (firstAck() === undefined && performance.now() - killedAt < WAIT_MS) await sleep(20);
      const ack = firstAck();
      const active = (await who.getActiveCoordinator({})).address;
      t.diagnostic(
        `active now: ${active === second!.address ? 'the former standby' : 'the former active'}; new home address after ${Math.round(movedMs)} ms, first write there after ${ack === undefined ? '-' : Math.round(ack - killedAt)} ms`,
      );
      assert.equal(active, second!.address, 'the scenario needs the standby to win the lock');
      assert.ok(ack !== undefined, `no write reached the new home primary within ${WAIT_MS} ms`);
      assert.ok(ack - killedAt <= BOUND_MS, `writes resumed only after ${ack - killedAt} ms`);

      // The agents report to the new active coordinator.
      const deadline = performance.now() + WAIT_MS;
      for (;;) {
        const h = await c.health.getHealth({});
        if (h.agents.filter((a) => a.ageMs < 2_000n).length >= 3) break;
        assert.ok(performance.now() < deadline, 'the agents did not follow to the new coordinator');
        await sleep(100);
      }
      // Catalog changes and 2PC decisions work, each within one call's deadline.
      const changedAt = performance.now();
      assert.ok((await c.admin.addReplica({ name: 'd1', host: '127.0.0.1', port: 2 })).epoch > 0n);
      await txn.decide({ txid: 'standby-won-1', decision: Decision.COMMIT, participants: ['d1'] });
      assert.equal((await txn.getDecision({ txid: 'standby-won-1' })).decision, Decision.COMMIT);
      t.diagnostic(
        `a catalog change and a 2PC decision took ${Math.round(performance.now() - changedAt)} ms`,
      );

      await writers.stop();
      assert.deepEqual(await missing(c.servers.get(addr(moved))!, writers.acked), []);
    } finally {
      await writers.stop();
      who.close();
      txn.close();
    }
  },
);
