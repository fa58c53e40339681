// The catalog watcher end to end: no catalog, no routing (57P03); a new epoch is picked up and
// acknowledged; with the coordinator gone the router keeps serving from its last catalog.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { RouterService, createClient } from '@tessera/proto';
import { startCoordinator } from '@tessera/coordinator';
import { createLogger } from '@tessera/telemetry';
import { startRouter } from './router.js';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

let c: TestCluster;
const silent = createLogger('test', { level: 'silent' });

before(async () => {
  c = await startTestCluster();
});
after(async () => {
  await c?.dispose();
});

describe('catalog watcher', () => {
  test('without a catalog, clients get 57P03', async () => {
    const r = await startRouter(
      { listen: '127.0.0.1:0', metricsPort: 0, coordinator: '127.0.0.1:1' },
      { logger: silent },
    );
    try {
      const client = new pg.Client({
        connectionString: `postgres://postgres@127.0.0.1:${r.port}/postgres`,
      });
      await assert.rejects(
        client.connect(),
        (e: { code?: string; message: string }) =>
          e.code === '57P03' && /no valid catalog/.test(e.message),
      );
    } finally {
      await r.stop();
    }
  });

  test('a new epoch is swapped in and acknowledged', async () => {
    const before = c.router.catalog()!.epoch;
    await c.admin.referenceTable({ schema: 'public', name: 'currencies' });
    const deadline = Date.now() + 5000;
    while (c.router.catalog()!.epoch === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const now = c.router.catalog()!;
    assert.ok(now.epoch > before);
    assert.equal(now.table('public', 'currencies')?.kind, 'reference');
    const routers = createClient(RouterService, c.coordinator.address);
    let acked = 0n;
    for (let i = 0; i < 50 && acked < now.epoch; i++) {
      const list = await routers.listRouters({});
      acked = list.routers.reduce((m, r) => (r.ackedEpoch > m ? r.ackedEpoch : m), 0n);
      await new Promise((r) => setTimeout(r, 50));
    }
    routers.close();
    assert.equal(acked, now.epoch);
  });

  test('with the coordinator away, the router keeps serving its last catalog', async () => {
    const address = c.coordinator.address;
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    // DDL on every node commits with two-phase commit, which needs the coordinator's log.
    await client.query('create table orders (tenant_id bigint not null, total int)');
    await c.coordinator.stop();
    await client.query('insert into orders (tenant_id, total) values (5, 1)');
    assert.equal(
      (await client.query('select total from orders where tenant_id = 5')).rows[0].total,
      1,
    );
    // A coordinator back on the same address: the watcher reconnects.
    const again = await startCoordinator(
      {
        catalogUrl: c.home.url('tessera_catalog'),
        listen: address,
        metricsPort: 0,
        standbyPollMs: 100,
        recoveryGraceMs: 10_000,
      },
      { log: silent },
    );
    await again.whenActive;
    const epoch = c.router.catalog()!.epoch;
    const admin = (await import('@tessera/proto')).createClient(
      (await import('@tessera/proto')).AdminService,
      address,
    );
    // The new coordinator may still be opening its port to clients: a refused call is retried.
    for (let tries = 1; ; tries++) {
      try {
        await admin.referenceTable({ schema: 'public', name: 'later' });
        break;
      } catch (e) {
        if ((e as { code?: number }).code !== 14 || tries >= 50) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    admin.close();
    const deadline = Date.now() + 10_000;
    while (c.router.catalog()!.epoch === epoch && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.ok(c.router.catalog()!.epoch > epoch, 'reconnected and swapped');
    await client.end();
    await again.stop();
  });
});
