// Held statements and epoch acknowledgements through the real router and coordinator: a write to
// a frozen range (AdminService.SetRangeState) waits, never an error, and succeeds once the range
// is active again in a later epoch, while a read of it is not held; past --hold-timeout-ms the
// write fails with 40001 naming the range. The router acknowledges epoch E only after a
// statement admitted under E-1 finished.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { hashKeyText } from '@tessera/pg-hash';
import { RangeState, RouterService, createClient } from '@tessera/proto';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { keysByNode, metricSum } from './testing/keys.js';

let c: TestCluster;
let client: pg.Client;
let key = 0;
let lo = 0n;

before(async () => {
  c = await startTestCluster({ router: { drainTimeoutMs: 60_000 } });
  client = new pg.Client({ connectionString: c.url() });
  // The router is restarted below; this connection then ends, as expected.
  client.on('error', () => undefined);
  await client.connect();
  await client.query('create table orders (tenant_id bigint not null, id int not null, total int)');
  key = keysByNode(c.router, 'orders').get('data1')![0]!;
  await client.query('insert into orders (tenant_id, id, total) values ($1, 1, 0)', [key]);
  const ks = c.router.catalog()!.keyspace('tenants')!;
  lo = ks.rangeOf(hashKeyText('bigint', String(key), ks.seed)).lo;
});
after(async () => {
  await client?.end().catch(() => undefined);
  await c?.dispose();
});

/** Changes the range's state and waits until the router routes by the new epoch. */
async function setState(state: RangeState): Promise<void> {
  const before = c.router.catalog()!.epoch;
  await c.admin.setRangeState({ keyspace: 'tenants', lo, state });
  const deadline = Date.now() + 20_000;
  while (c.router.catalog()!.epoch <= before) {
    if (Date.now() > deadline) throw new Error('the router never saw the new epoch');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const settled = <T>(p: Promise<T>): { done: boolean; p: Promise<T> } => {
  const s = { done: false, p };
  p.then(
    () => (s.done = true),
    () => (s.done = true),
  );
  return s;
};

describe('Held: writes to a frozen range wait for a later epoch', () => {
  test('the write waits, a read of the range does not, and the write runs once active', async () => {
    await setState(RangeState.FROZEN);
    const writer = new pg.Client({ connectionString: c.url() });
    await writer.connect();
    try {
      const write = settled(
        writer.query('update orders set total = total + 1 where tenant_id = $1', [key]),
      );
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(write.done, false, 'the write is held while the range is frozen');
      // Reads of a frozen range go on on its owner.
      const read = await client.query('select total from orders where tenant_id = $1', [key]);
      assert.deepEqual(read.rows, [{ total: 0 }]);
      await setState(RangeState.ACTIVE);
      assert.equal((await write.p).rowCount, 1);
      const after = await client.query('select total from orders where tenant_id = $1', [key]);
      assert.deepEqual(after.rows, [{ total: 1 }]);
    } finally {
      await writer.end();
    }
    assert.ok(
      (await metricSum(
        c.router.metricsPort,
        /^tessera_router_held_statements_total\{reason="range"/,
      )) >= 1,
    );
    assert.ok((await metricSum(c.router.metricsPort, /^tessera_router_hold_seconds_count\{/)) >= 1);
  });

  test('past --hold-timeout-ms the write fails with 40001 naming the range', async () => {
    await c.restartRouter({ holdTimeoutMs: 300, drainTimeoutMs: 60_000 });
    await setState(RangeState.FROZEN);
    const writer = new pg.Client({ connectionString: c.url() });
    await writer.connect();
    try {
      await assert.rejects(
        writer.query('update orders set total = total + 1 where tenant_id = $1', [key]),
        (e: { code?: string; message?: string }) =>
          e.code === '40001' && e.message!.includes(`range starting at ${lo}`),
      );
      // The session goes on.
      assert.equal((await writer.query('select 1 as one')).rows[0].one, 1);
    } finally {
      await writer.end();
      await setState(RangeState.ACTIVE);
      await c.restartRouter({ drainTimeoutMs: 60_000 });
    }
  });
});

describe('epoch acknowledgements', () => {
  test('the ack of epoch E waits for a statement admitted at E-1 to finish', async () => {
    const routers = createClient(RouterService, c.coordinator.address);
    // A connection of its own: the router was restarted since `client` connected.
    const slowClient = new pg.Client({ connectionString: c.url() });
    await slowClient.connect();
    const acked = async (): Promise<bigint> => {
      const { routers: list } = await routers.listRouters({});
      return list.reduce((max, r) => (r.ackedEpoch > max ? r.ackedEpoch : max), 0n);
    };
    try {
      const older = c.router.catalog()!.epoch;
      const deadline = Date.now() + 20_000;
      while ((await acked()) < older && Date.now() < deadline) await sleep(50);
      assert.equal(await acked(), older);
      // Admitted under `older`, running for a while.
      const slow = settled(
        slowClient.query('select pg_sleep(4), tenant_id from orders where tenant_id = $1', [key]),
      );
      await sleep(300);
      await c.admin.referenceTable({ schema: 'public', name: 'ack_probe' });
      while (c.router.catalog()!.epoch <= older) await sleep(20);
      const newer = c.router.catalog()!.epoch;
      // The router routes by the new epoch but must not acknowledge it yet.
      await sleep(500);
      assert.equal(slow.done, false, 'the slow statement still runs');
      assert.equal(await acked(), older, 'not acknowledged while an older statement runs');
      await slow.p;
      const end = Date.now() + 10_000;
      while ((await acked()) < newer && Date.now() < end) await sleep(50);
      assert.equal(await acked(), newer, 'acknowledged once it finished');
    } finally {
      routers.close();
      await slowClient.end();
    }
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
