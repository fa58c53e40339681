// Patroni mode for real (`npm run test:patroni`; .ci/run runs it, it is not in the default
// `npm test` because Patroni's failover takes its ttl, 20 s): data node d1 under two Patroni
// members with synchronous_mode and a single-member etcd. SIGKILL of the leader's Patroni and
// Postgres under write load: Patroni promotes its synchronous standby after the ttl, Tessera
// follows (the catalog names the new primary), and nothing acknowledged is lost.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReplicaState } from '@tessera/proto';
import { missing, startWriters } from '../testing/writers.js';
import { startPatroniCluster, type PatroniCluster } from '../testing/patroni-cluster.js';

let c: PatroniCluster;
before(async () => {
  c = await startPatroniCluster();
});
after(() => c?.dispose());

test(
  'Tessera follows Patroni promoting its synchronous standby; nothing acknowledged is lost',
  { timeout: 300_000 },
  async (t) => {
    // Patroni's synchronous standby is mirrored into the catalog's sync set.
    const deadline = performance.now() + 60_000;
    for (;;) {
      const n = await c.node();
      if (n.replicas.some((r) => r.name === 'pg2' && r.state === ReplicaState.SYNC)) break;
      assert.ok(performance.now() < deadline, 'pg2 never became sync in the catalog');
      await sleep(200);
    }
    await (await c.primary()).query('create table t (id int primary key)');
    const writers = startWriters(c, 2);
    await sleep(2_000);
    assert.ok(writers.acked.size > 0);
    const [pg1, pg2] = c.members;
    const killedAt = performance.now();
    c.kill(pg1!);
    const until = performance.now() + 120_000;
    for (;;) {
      const n = await c.node();
      if (n.port === pg2!.pgPort && !n.failingOver) break;
      assert.ok(performance.now() < until, 'Tessera did not follow Patroni to pg2');
      await sleep(200);
    }
    const followedMs = performance.now() - killedAt;
    const firstAck = () => writers.acks.find((a) => a.server === pg2!.address)?.at;
    const flow = performance.now() + 15_000;
    while (firstAck() === undefined && performance.now() < flow) await sleep(50);
    await sleep(500);
    await writers.stop();
    t.diagnostic(
      `Tessera named pg2 ${Math.round(followedMs)} ms after the SIGKILL (Patroni ttl 20 s); first write on it ${Math.round((firstAck() ?? NaN) - killedAt)} ms after; ${writers.acked.size} acknowledged`,
    );
    assert.ok(firstAck() !== undefined, 'writes flow to the new primary');
    assert.deepEqual(
      await missing(await c.primary(), writers.acked),
      [],
      'every acknowledged write is on pg2',
    );
    const n = await c.node();
    assert.ok(
      n.replicas.some((r) => r.port === pg1!.pgPort),
      'pg1 is kept as a replica for Patroni to rejoin',
    );
  },
);
