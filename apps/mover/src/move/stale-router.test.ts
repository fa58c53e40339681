// A stale router cannot write to the old owner: a router process paused (SIGSTOP) before a
// cutover cannot acknowledge it; the coordinator leaves it out once its heartbeat is stale (a
// router without a lease; with a lease, once the lease lapsed), the move flips, and when the
// router wakes up with its old catalog, its write of a moved key goes to the old owner, whose
// narrowed fence refuses it (23514). It is never applied there.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { hashKeyText } from '@tessera/pg-hash';
import { JobState } from '@tessera/proto';
import pg from 'pg';
import {
  moveRequest,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';
import { spawnRouter } from '../testing/router-process.js';

let c: MoverCluster;
before(async () => {
  c = await startMoverCluster({ ranges: 2, routerStaleMs: 2_000 });
  await c.startMover({ cutoverBudgetMs: 500, cutoverAttempts: 30 });
});
after(async () => {
  await c?.dispose();
});

test('a paused router is left out after its heartbeat is stale, and its late write to the old owner is refused', async () => {
  const router = await spawnRouter(c.coordinator.address, 'sleepy');
  try {
    const cat = await c.catalog.getCatalog({});
    const range = cat.ranges.find((r) => r.keyspace === 'accounts' && r.owner === 'data1')!;
    const key = [...Array(5000).keys()]
      .map((i) => BigInt(i + 1))
      .find((k) => {
        const h = hashKeyText('bigint', k.toString(), 0n);
        return range.lo <= h && h <= range.hi;
      })!;
    // A session to the sleepy router, open before it sleeps (its backend pool warm).
    const client = new pg.Client({ connectionString: router.url });
    await client.connect();
    await client.query('select 1 from accounts where id = $1', [key.toString()]);
    router.child.kill('SIGSTOP');
    const job = await c.jobs.submitJob(moveRequest('accounts', range.lo, 'data2'));
    const done = await waitForJob(c.jobs, job.id, 180_000);
    assert.equal(done.state, JobState.DONE, done.error);
    // The write is queued while the router sleeps, so it wakes with it and its old catalog
    // (owner data1) at once; whichever it reads first, the row may never land on data1.
    const write = client
      .query(`insert into accounts (id, balance) values ($1, 1)`, [key.toString()])
      .then(
        () => 'applied',
        (e: unknown) => (e as { code?: string }).code ?? String(e),
      );
    await new Promise((r) => setTimeout(r, 200));
    router.child.kill('SIGCONT');
    const outcome = await write;
    const onOld = await c.byName
      .get('data1')!
      .query('select 1 from accounts where id = $1', [key.toString()]);
    assert.equal(onOld.length, 0, 'a stale router put a row of a moved range on its old owner');
    const onNew = await c.byName
      .get('data2')!
      .query('select 1 from accounts where id = $1', [key.toString()]);
    // Refused by the old owner's fence (23514), or routed by the new catalog to the new owner.
    assert.ok(
      outcome === '23514' || (outcome === 'applied' && onNew.length === 1),
      `outcome ${outcome}`,
    );
    await client.end().catch(() => undefined);
  } finally {
    await router.kill();
  }
});
