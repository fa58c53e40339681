// The router's side of a failover, end to end with real parts: a data node's primary is
// SIGKILLed, and while the coordinator promotes its synchronous replica (whose agent, a real
// process, is frozen for a few seconds so the failover stays in progress) a write is issued
// through a real router. The catalog says the node is failing over, so the router holds the
// write; once the replica is promoted and in the catalog, the write runs on the new primary and
// the client gets its success, no error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { KeyType, ReplicaState } from '@tessera/proto';
import { startRouter, type RunningRouter } from '@tessera/router';
import {
  addr,
  hasSyncReplica,
  quiet,
  startHaCluster,
  type HaCluster,
} from './testing/ha-cluster.js';

let c: HaCluster;
let router: RunningRouter;

before(async () => {
  // The frozen replica agent's last report must stay fresh while the primary's agent notices the
  // kill; with the default 3 s it can go stale first and the coordinator restarts the primary.
  c = await startHaCluster({ processAgents: true, reportFreshMs: 20_000 });
  router = await startRouter(
    {
      listen: '127.0.0.1:0',
      metricsPort: 0,
      coordinator: c.coordinatorList(),
      holdTimeoutMs: 60_000,
    },
    { logger: quiet() },
  );
  await router.ready();
  await c.admin.createKeyspace({ name: 'ks', keyType: KeyType.BIGINT, ranges: 2, seed: 0n });
  await c.admin.distributeTable({
    schema: 'public',
    name: 'held_t',
    keyColumn: 'k',
    keyspace: 'ks',
  });
  const client = new pg.Client({ connectionString: url() });
  await client.connect();
  await client.query('create table held_t (k bigint not null, v int not null)');
  await client.query('insert into held_t (k, v) values (1, 0)');
  await client.end();
});
after(async () => {
  await router?.stop();
  await c?.dispose();
});

const url = (): string => `postgres://postgres@127.0.0.1:${router.port}/postgres`;

test(
  'a write issued while its node fails over is held, then succeeds on the new primary',
  { timeout: 180_000 },
  async () => {
    const before = await c.waitNode(hasSyncReplica, 60_000, 'a synchronous replica');
    const replica = before.replicas.find((r) => r.state === ReplicaState.SYNC)!;
    const replicaAgent = c.agents.get(addr(replica))!.child!;
    // The replica joins the sync set by what the primary's agent reports, maybe before its own
    // agent (started after) reported at all; frozen before that, the coordinator would have no
    // report of it, so no replica to promote, and would start the primary again instead.
    const reported = performance.now() + 30_000;
    for (;;) {
      const h = await c.health.getHealth({});
      const seen = h.agents.find((a) => a.report?.address === addr(replica));
      if (seen?.report?.reachable === true && seen.report.inRecovery && seen.ageMs < 2_000n) break;
      assert.ok(performance.now() < reported, "the replica's agent never reported");
      await sleep(100);
    }
    const client = new pg.Client({ connectionString: url() });
    client.on('error', () => undefined);
    await client.connect();
    try {
      // The replica's agent is frozen: the failover begins (routers hold) and waits on it.
      replicaAgent.kill('SIGSTOP');
      let frozen = true;
      try {
        await c.servers.get(addr(before))!.stop('kill');
        await c.waitNode((n) => n.failingOver, 30_000, 'the node failing over');
        const seen = performance.now() + 10_000;
        while (!router.catalog()?.failingOver.has('d1') && performance.now() < seen)
          await sleep(20);
        assert.ok(router.catalog()?.failingOver.has('d1'), 'the router knows d1 fails over');
        const started = performance.now();
        const write = client.query('insert into held_t (k, v) values (1, 1)').then(
          (r) => ({ ok: true as const, count: r.rowCount, ms: performance.now() - started }),
          (e: Error) => ({ ok: false as const, error: e.message }),
        );
        await sleep(2_000);
        const early = await Promise.race([write, sleep(0).then(() => undefined)]);
        assert.equal(
          early,
          undefined,
          `the write was answered while the node failed over: ${JSON.stringify(early)}`,
        );
        replicaAgent.kill('SIGCONT');
        frozen = false;
        const moved = await c.waitNode(
          (n) => addr(n) === addr(replica) && !n.failingOver,
          60_000,
          'the replica promoted and in the catalog',
        );
        const r = await write;
        assert.ok(r.ok, `the held write failed: ${JSON.stringify(r)}`);
        assert.equal(r.count, 1);
        const rows = await c.servers
          .get(addr(moved))!
          .query<{ v: number }>('select v from held_t where k = 1 order by v');
        assert.deepEqual(
          rows.map((x) => x.v),
          [0, 1],
          'the held write is on the new primary',
        );
      } finally {
        if (frozen) replicaAgent.kill('SIGCONT');
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  },
);
