// Clients that give up while their transaction waits for a backend (the soak's finding: more
// clients than --pool-size, transactions on both data nodes, clients that time out and drop their
// connection) leave no backend idle in transaction; one that leaves while it waits for the pool
// gives its turn to the next client; and a transaction that holds a backend on one
// node while waiting for a backend on another (hold-and-wait across pools) is refused with 53300
// after --held-acquire-timeout-ms rather than waiting for the pool forever.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { keysByNode, metricSum } from './testing/keys.js';

let c: TestCluster;
let k1: number;
let k2: number;
let k1b: number;
const CLIENTS = 12;
const GIVE_UP_MS = 400;

before(async () => {
  // No bound on the held wait here: giving up alone must free everything (the bound is tested below).
  c = await startTestCluster({ router: { poolSize: 2, heldAcquireTimeoutMs: 3_600_000 } });
  const keys = keysByNode(c.router, 'orders');
  k1 = keys.get('data1')![0]!;
  k2 = keys.get('data2')![0]!;
  k1b = keys.get('data1')![1]!;
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query(
    'create table orders (tenant_id bigint not null, id bigint not null, total int, primary key (tenant_id, id))',
  );
  await client.query(`insert into orders values (${k1}, 1, 0), (${k2}, 1, 0), (${k1b}, 1, 0)`);
  await client.end();
});
after(async () => {
  await c?.dispose();
});

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: c.url() });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Cuts the client's connection the way a driver's timeout does: no Terminate, the socket gone. */
function drop(client: pg.Client): void {
  (client as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
}

/** BEGIN; an UPDATE on `first`'s node, then on `second`'s; COMMIT: given up after GIVE_UP_MS. */
async function impatient(first: number, second: number): Promise<void> {
  const client = await connect();
  const txn = (async () => {
    await client.query('begin');
    await client.query('update orders set total = total + 1 where tenant_id = $1', [first]);
    await client.query('update orders set total = total + 1 where tenant_id = $1', [second]);
    await client.query('commit');
  })().catch(() => undefined);
  const gaveUp = await Promise.race([txn.then(() => false), sleep(GIVE_UP_MS).then(() => true)]);
  if (gaveUp) drop(client);
  else await client.end().catch(() => undefined);
}

/** Backends on each node that are idle in a transaction, or waiting on a lock. */
async function stuck(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, server] of c.byName) {
    const [row] = await server.query<{ n: string }>(
      "select count(*) n from pg_stat_activity where backend_type = 'client backend' and (state like 'idle in transaction%' or wait_event_type = 'Lock')",
    );
    const n = Number(row!.n);
    if (n > 0) out[name] = n;
  }
  return out;
}

describe('clients that give up', () => {
  test(`${CLIENTS} clients over 2 backends per node, dropping their connections`, async () => {
    await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) =>
        i % 2 === 0 ? impatient(k1, k2) : impatient(k2, k1),
      ),
    );
    let left = await stuck();
    for (let i = 0; i < 30 && Object.keys(left).length > 0; i++) {
      await sleep(100);
      left = await stuck();
    }
    assert.deepEqual(left, {}, 'backends idle in transaction or waiting on locks');
    assert.ok(
      (await metricSum(c.router.metricsPort, /^tessera_router_pool_acquire_waits_total/)) >= 1,
      'clients waited for a busy pool',
    );
    // A new client gets backends on both nodes and commits across them.
    const client = await connect();
    try {
      const done = (async () => {
        await client.query('begin');
        await client.query('update orders set total = 100 where tenant_id = $1', [k1]);
        await client.query('update orders set total = 100 where tenant_id = $1', [k2]);
        await client.query('commit');
      })();
      const late = sleep(5_000).then(() => 'late');
      assert.notEqual(await Promise.race([done.then(() => 'done'), late]), 'late');
    } finally {
      await client.end();
    }
  });

  test('a client that leaves while it waits for the pool gives its turn away', async () => {
    await c.restartRouter({ poolSize: 1 });
    const holder = await connect();
    const quitter = await connect();
    const next = await connect();
    try {
      await holder.query('begin');
      await holder.query('update orders set total = total + 1 where tenant_id = $1', [k1]);
      // data1's only backend is the holder's: the quitter, in a transaction, waits for the pool
      // and leaves. (Before the fix its wait went on; the holder's backend went to it when the
      // holder committed, and stayed idle in its transaction with nobody to end it.)
      await quitter.query('begin');
      // Another row of data1: the quitter waits for the pool, not for the holder's row lock.
      const waiting = quitter.query('update orders set total = 1 where tenant_id = $1', [k1b]);
      waiting.catch(() => undefined);
      const port = c.router.metricsPort;
      const waits = /^tessera_router_pool_acquire_waits_total\{node="data1"/;
      for (let i = 0; i < 50 && (await metricSum(port, waits)) < 1; i++) await sleep(20);
      drop(quitter);
      const abandoned = /^tessera_router_pool_acquire_abandoned_total\{node="data1"/;
      for (let i = 0; i < 50 && (await metricSum(port, abandoned)) < 1; i++) await sleep(20);
      assert.equal(await metricSum(port, abandoned), 1);
      await holder.query('commit');
      // The backend the holder gave back goes to the next client, not to the one that left.
      const t0 = Date.now();
      const r = await next.query('select total from orders where tenant_id = $1', [k1]);
      assert.equal(r.rows.length, 1);
      assert.ok(Date.now() - t0 < 3_000, `the next client waited ${Date.now() - t0} ms`);
      assert.deepEqual(await stuck(), {});
    } finally {
      await holder.end().catch(() => undefined);
      await next.end().catch(() => undefined);
    }
  });

  test('a transaction waiting for a second node while holding the first is refused in time', async () => {
    await c.restartRouter({ poolSize: 1, heldAcquireTimeoutMs: 500 });
    const a = await connect();
    const b = await connect();
    try {
      await a.query('begin');
      await b.query('begin');
      await a.query('update orders set total = total + 1 where tenant_id = $1', [k1]);
      await b.query('update orders set total = total + 1 where tenant_id = $1', [k2]);
      const t0 = Date.now();
      // Each holds the only backend of one node and wants the other's.
      const got = await Promise.allSettled([
        a.query('update orders set total = total + 1 where tenant_id = $1', [k2]),
        b.query('update orders set total = total + 1 where tenant_id = $1', [k1]),
      ]);
      const waitedMs = Date.now() - t0;
      assert.ok(waitedMs < 3_000, `waited ${waitedMs} ms`);
      const refused = got.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.ok(refused.length >= 1, 'at least one of the two is refused');
      for (const r of refused) {
        const e = r.reason as { code?: string; message?: string };
        assert.equal(e.code, '53300');
        assert.match(e.message ?? '', /--held-acquire-timeout-ms/);
      }
      await a.query('rollback');
      await b.query('rollback');
      const port = c.router.metricsPort;
      assert.ok((await metricSum(port, /^tessera_router_pool_acquire_timeouts_total/)) >= 1);
      // Both sessions gave their backends back: a third client commits across the two nodes.
      const d = await connect();
      await d.query('begin');
      await d.query('update orders set total = 7 where tenant_id = $1', [k1]);
      await d.query('update orders set total = 7 where tenant_id = $1', [k2]);
      await d.query('commit');
      await d.end();
    } finally {
      await a.end().catch(() => undefined);
      await b.end().catch(() => undefined);
    }
  });
});
