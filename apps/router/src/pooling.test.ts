// Transaction pooling: 200 concurrent clients over 10 backends per node run a mixed
// prepared-statement workload without an error, and one client's SET never shows in another's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

let c: TestCluster;
const CLIENTS = 200;

before(async () => {
  c = await startTestCluster({ router: { poolSize: 10 } });
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query(
    'create table orders (tenant_id bigint not null, id bigint not null, total int, primary key (tenant_id, id))',
  );
  await client.end();
});
after(async () => {
  await c?.dispose();
});

async function worker(i: number): Promise<void> {
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  try {
    const mine = `${(i % 7) + 1}MB`;
    const setsWorkMem = i % 2 === 0;
    if (setsWorkMem) await client.query(`set work_mem = '${mine}'`);
    await client.query(`set application_name = 'client-${i}'`);
    for (let k = 0; k < 10; k++) {
      const tenant = i * 1000 + k;
      await client.query({
        name: 'ins',
        text: 'insert into orders (tenant_id, id, total) values ($1, $2, $3)',
        values: [tenant, k, k],
      });
      await client.query('begin');
      await client.query({
        name: 'upd',
        text: 'update orders set total = total + 1 where tenant_id = $1 and id = $2',
        values: [tenant, k],
      });
      const r = await client.query({
        name: 'sel',
        text: 'select total from orders where tenant_id = $1 and id = $2',
        values: [tenant, k],
      });
      assert.equal(r.rows[0]?.total, k + 1);
      await client.query('commit');
      const wm = await client.query('show work_mem');
      assert.equal(wm.rows[0]?.work_mem, setsWorkMem ? mine : '4MB', `work_mem of client ${i}`);
      const app = await client.query({
        name: 'app',
        text: 'select current_setting($1) as v',
        values: ['application_name'],
      });
      assert.equal(app.rows[0]?.v, `client-${i}`);
    }
  } finally {
    await client.end();
  }
}

describe('transaction pooling', () => {
  test(`${CLIENTS} clients over 10 backends per node`, async () => {
    const results = await Promise.allSettled(Array.from({ length: CLIENTS }, (_, i) => worker(i)));
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.deepEqual(failures.map((f) => String(f.reason)).slice(0, 5), []);
    for (const server of c.byName.values()) {
      const [row] = await server.query<{ n: string }>(
        "select count(*) n from pg_stat_activity where datname = 'postgres' and backend_type = 'client backend' and application_name not in ('psql', 'tessera-router ddl watch')",
      );
      assert.ok(Number(row!.n) <= 12, `backends on a node: ${row!.n}`);
    }
    let total = 0;
    for (const server of c.data)
      total += Number((await server.query<{ n: string }>('select count(*) n from orders'))[0]!.n);
    assert.equal(total, CLIENTS * 10);
  });
});
