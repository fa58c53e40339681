// The router's lease with the coordinator, end to end: granted at start and shown in metrics;
// once the coordinator is gone for longer than the lease, statements on nodes wait (never run by
// a catalog the router can no longer vouch for) and run when a coordinator renews it; a wait
// longer than --hold-timeout-ms fails with 40001 naming the lease. The coordinator's side
// (leaving a lapsed router out of AwaitEpoch) is tested in apps/coordinator.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { RouterLease } from './lease.js';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';

// Long enough that a renewal (sent every third of it) survives a loaded test machine.
const LEASE_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('RouterLease', () => {
  test('lapsed before the first grant, valid for the lease from the renewal sent, then lapsed', () => {
    const l = new RouterLease();
    assert.equal(l.lapsed(1000), true);
    l.granted(1000, 300);
    assert.equal(l.lapsed(1299), false);
    assert.equal(l.lapsed(1300), true);
    // A grant of an older renewal does not shorten the lease.
    l.granted(900, 300);
    assert.equal(l.lapsed(1299), false);
  });

  test('whenValid resolves at the grant, or false at its timeout', async () => {
    const l = new RouterLease();
    const w = l.whenValid(10_000);
    l.granted(performance.now(), 60_000);
    assert.equal(await w.valid, true);
    const lapsed = new RouterLease();
    assert.equal(await lapsed.whenValid(20).valid, false);
  });
});

describe('router lease, end to end', () => {
  let c: TestCluster;
  before(async () => {
    c = await startTestCluster({ coordinator: { routerLeaseMs: LEASE_MS } });
  });
  after(async () => {
    await c?.dispose();
  });

  async function leaseSeconds(): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
    const m = /^tessera_router_lease_remaining_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text);
    assert.ok(m, 'the lease gauge is exported');
    return Number(m[1]);
  }

  test('a lapsed lease holds statements on nodes until a coordinator renews it', async () => {
    for (let i = 0; (await leaseSeconds()) === 0 && i < 100; i++) await sleep(50);
    assert.ok((await leaseSeconds()) > 0, 'the router holds a lease');
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    try {
      await client.query('create table orders (tenant_id bigint not null, total int)');
      await client.query('insert into orders (tenant_id, total) values (7, 70)');
      const restarted = c.restartCoordinator({ downMs: LEASE_MS * 2 + 1500 });
      await sleep(LEASE_MS * 2);
      assert.equal(await leaseSeconds(), 0, 'the lease lapsed');
      const started = performance.now();
      let settled = false;
      const read = client.query('select total from orders where tenant_id = 7').finally(() => {
        settled = true;
      });
      await sleep(700);
      assert.equal(settled, false, 'the read waits while the lease is lapsed');
      await restarted;
      const r = await read;
      assert.deepEqual(r.rows, [{ total: 70 }]);
      assert.ok(performance.now() - started >= 700);
      assert.ok((await leaseSeconds()) > 0, 'renewed');
    } finally {
      await client.end();
    }
  });

  test('a wait past --hold-timeout-ms fails with 40001 naming the lease', async () => {
    await c.restartRouter({ holdTimeoutMs: 800 });
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    try {
      const restarted = c.restartCoordinator({ downMs: LEASE_MS * 2 + 2500 });
      await sleep(LEASE_MS * 2);
      await assert.rejects(
        client.query('select total from orders where tenant_id = 7'),
        (e: { code?: string; message: string }) =>
          e.code === '40001' && /lease with the coordinator/.test(e.message),
      );
      await restarted;
      // Renewed: the next statement runs.
      for (let i = 0; (await leaseSeconds()) === 0 && i < 100; i++) await sleep(50);
      assert.deepEqual((await client.query('select total from orders where tenant_id = 7')).rows, [
        { total: 70 },
      ]);
    } finally {
      await client.end();
    }
  });
});
