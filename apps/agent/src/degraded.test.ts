// The synchronous replica lost. With durability preferred the primary goes on alone, the node is
// recorded degraded (catalog, health, metrics), and a primary lost while degraded is not failed
// over to the stale replica (its agent starts it again instead). With durability required commits
// wait for the replica, nothing acknowledged is lost, and they go on once it is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReplicaState } from '@tessera/proto';
import { addr, hasSyncReplica, startHaCluster } from './testing/ha-cluster.js';
import { missing, startWriters } from './testing/writers.js';

test(
  'preferred: the primary goes on alone, degraded is shown, and a primary kill while degraded is not failed over',
  { timeout: 180_000 },
  async (t) => {
    const c = await startHaCluster({ durability: 'preferred' });
    try {
      const primary = await c.primary();
      await primary.query('create table t (id int primary key)');
      const n0 = await c.waitNode(hasSyncReplica, 60_000, 'a synchronous replica');
      const rAddr = addr(n0.replicas[0]!);
      const replica = c.servers.get(rAddr)!;
      const writers = startWriters(c, 2);
      await sleep(1_000);

      await c.agents.get(rAddr)!.stop(); // else it would start its standby again
      const killedAt = performance.now();
      await replica.stop('kill');
      const degraded = await c.waitNode(
        (n) => n.degraded,
        20_000,
        'the node to be recorded degraded',
      );
      t.diagnostic(
        `recorded degraded ${Math.round(performance.now() - killedAt)} ms after the replica died: ${degraded.degradedReason}`,
      );
      assert.equal(degraded.replicas[0]?.state, ReplicaState.CATCHING_UP, 'it left the sync set');
      assert.match(degraded.degradedReason, /commits alone/);
      const degradedAt = performance.now();
      await sleep(1_500);
      assert.ok(
        writers.acks.some((a) => a.at > degradedAt),
        'the primary goes on committing alone',
      );
      const health = await c.health.getHealth({});
      assert.ok(health.nodes.some((h) => h.node === 'd1'));
      const metrics = await fetch(
        `http://127.0.0.1:${c.coordinators[0]!.inProcess!.metricsPort}/metrics`,
      );
      assert.match(await metrics.text(), /tessera_node_degraded\{[^}]*node="d1"[^}]*\} 1/);

      // The replica comes back stale: up, in recovery, reporting, but not streaming.
      appendFileSync(
        join(replica.dataDir, 'postgresql.auto.conf'),
        "primary_conninfo = 'host=127.0.0.1 port=1 user=postgres'\n",
      );
      await replica.start();
      await c.startAgent(rAddr);
      await sleep(1_500);
      const primaryAddr = addr(primary);
      const acked = new Set(writers.acked);
      await primary.stop('kill');
      // Not failed over: the catalog keeps the primary, the stale replica stays a standby, and the
      // primary (the one copy with every acknowledged commit) is started again.
      const deadline = performance.now() + 8_000;
      while (performance.now() < deadline) {
        const n = await c.node();
        assert.equal(addr(n), primaryAddr, 'failed over to the stale replica');
        await sleep(200);
      }
      const [r] = await replica.query<{ r: boolean }>('select pg_is_in_recovery() as r');
      assert.equal(r?.r, true);
      await c.waitNode(() => true, 1, 'the node');
      const back = performance.now() + 30_000;
      for (;;) {
        try {
          await primary.query('select 1');
          break;
        } catch {
          if (performance.now() > back) throw new Error('the primary was not started again');
          await sleep(200);
        }
      }
      await writers.stop();
      assert.deepEqual(await missing(primary, acked), [], 'nothing acknowledged was lost');
    } finally {
      await c.dispose();
    }
  },
);

test(
  'required: commits wait while the replica is gone, resume when it is back, nothing acknowledged is lost',
  { timeout: 180_000 },
  async (t) => {
    const c = await startHaCluster({ durability: 'required' });
    try {
      await (await c.primary()).query('create table t (id int primary key)');
      const n0 = await c.waitNode(hasSyncReplica, 60_000, 'a synchronous replica');
      const rAddr = addr(n0.replicas[0]!);
      const replica = c.servers.get(rAddr)!;
      const writers = startWriters(c, 2);
      await sleep(1_000);

      await c.agents.get(rAddr)!.stop();
      const killedAt = performance.now();
      await replica.stop('kill');
      const degraded = await c.waitNode(
        (n) => n.degraded,
        20_000,
        'the node to be recorded degraded',
      );
      assert.match(degraded.degradedReason, /commits wait/);
      assert.equal(degraded.replicas[0]?.state, ReplicaState.SYNC, 'it stays in the sync set');
      await sleep(2_000);
      const during = writers.acks.filter((a) => a.at > killedAt + 500).length;
      assert.equal(
        during,
        0,
        `${during} commits were acknowledged without the synchronous replica`,
      );

      await replica.start();
      await c.startAgent(rAddr);
      const backAt = performance.now();
      const deadline = backAt + 30_000;
      while (!writers.acks.some((a) => a.at > backAt) && performance.now() < deadline)
        await sleep(50);
      assert.ok(
        writers.acks.some((a) => a.at > backAt),
        'commits go on once the replica is back',
      );
      t.diagnostic(`commits waited ${Math.round(backAt - killedAt)} ms, then resumed`);
      await c.waitNode((n) => hasSyncReplica(n) && !n.degraded, 30_000, 'not degraded any more');

      // And the replica has every acknowledged commit: fail over to it.
      const oldAddr = addr(await c.primary());
      await (await c.primary()).stop('kill');
      await c.waitNode((n) => addr(n) !== oldAddr && !n.failingOver, 20_000, 'the failover');
      await writers.stop();
      assert.deepEqual(
        await missing(await c.primary(), writers.acked),
        [],
        'nothing acknowledged was lost',
      );
    } finally {
      await c.dispose();
    }
  },
);
