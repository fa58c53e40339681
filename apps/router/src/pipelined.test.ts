// Reads of several clients pipelined on one backend (the lane policy, execute/acquire.ts): each
// client gets its own rows and its own errors, a cancel reaches only the statement it was meant
// for, writes and transactions never share, reads gather on an open lane but not behind a slow
// read while a backend is idle, and --pipeline-depth 1 turns sharing off.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { analyze } from '@tessera/sql';
import { pipelinableRead } from './execute/acquire.js';
import { keyOf, sendCancel } from './testing/cancel.js';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

let c: TestCluster;
const TENANTS = 40;
const ROWS_PER_TENANT = 5;

before(async () => {
  // Two backends per node: forty clients keep every one of them busy.
  c = await startTestCluster({ router: { poolSize: 2, pipelineDepth: 8 } });
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query(
    'create table orders (tenant_id bigint not null, id bigint not null, total int, primary key (tenant_id, id))',
  );
  const rows: string[] = [];
  for (let t = 1; t <= TENANTS; t++)
    for (let i = 1; i <= ROWS_PER_TENANT; i++) rows.push(`(${t}, ${i}, ${t * 100 + i})`);
  await client.query(`insert into orders (tenant_id, id, total) values ${rows.join(', ')}`);
  await client.end();
});
after(async () => {
  await c?.dispose();
});

async function pipelinedCount(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${c.router.metricsPort}/metrics`)).text();
  const m = /tessera_router_pipelined_statements_total\{service="router"\} (\d+)/.exec(text);
  return Number(m?.[1] ?? 0);
}

const READ = {
  name: 'read',
  text: 'select tenant_id, id, total from orders where tenant_id = $1 and id = $2',
};

async function withClients<T>(
  n: number,
  f: (cl: pg.Client, i: number) => Promise<T>,
): Promise<T[]> {
  const clients = Array.from({ length: n }, () => new pg.Client({ connectionString: c.url() }));
  await Promise.all(clients.map((cl) => cl.connect()));
  try {
    return await Promise.all(clients.map((cl, i) => f(cl, i)));
  } finally {
    await Promise.all(clients.map((cl) => cl.end()));
  }
}

const SLOW = { name: 'slow', text: 'select count(*) as n from generate_series(1, $1)' };

/** Two clients with SLOW prepared on a backend by a first run of its own each. */
async function withSlowPair(f: (a: pg.Client, b: pg.Client) => Promise<void>): Promise<void> {
  const a = new pg.Client({ connectionString: c.url() });
  const b = new pg.Client({ connectionString: c.url() });
  await Promise.all([a.connect(), b.connect()]);
  try {
    await a.query({ ...SLOW, values: [1] });
    await b.query({ ...SLOW, values: [1] });
    await f(a, b);
  } finally {
    await Promise.all([a.end(), b.end()]);
  }
}

describe('pipelined reads', () => {
  test('which statements may share a backend', () => {
    const ok = (sql: string) => pipelinableRead(analyze(sql));
    assert.equal(ok('select * from orders where tenant_id = $1'), true);
    assert.equal(ok('select count(*), max(total) from orders where tenant_id = $1'), true);
    assert.equal(ok('select lower(name) from countries'), true);
    assert.equal(ok('select * from orders where tenant_id = $1 for update'), false);
    assert.equal(ok('select pg_sleep(1)'), false);
    assert.equal(ok('select pg_advisory_lock($1)'), false);
    assert.equal(ok('select nextval($1)'), false);
    assert.equal(ok('select my_function($1)'), false);
    assert.equal(
      ok('with d as (delete from orders where tenant_id = $1 returning *) select * from d'),
      false,
    );
    assert.equal(ok('update orders set total = 1 where tenant_id = $1'), false);
    assert.equal(ok('begin'), false);
  });

  test('simple-protocol reads share lanes too; an error stays with its own client', async () => {
    const before = await pipelinedCount();
    await withClients(TENANTS, async (cl, i) => {
      const tenant = i + 1;
      for (let k = 0; k < 60; k++) {
        const id = (k % ROWS_PER_TENANT) + 1;
        if (i === 3 && k % 10 === 5) {
          // A failing read on a shared backend: only this client sees the error.
          await assert.rejects(
            cl.query(`select 1 / (total - total) from orders where tenant_id = ${tenant}`),
            (e: Error & { code?: string }) => e.code === '22012',
          );
          continue;
        }
        const r = await cl.query(
          `select tenant_id, id, total from orders where tenant_id = ${tenant} and id = ${id}`,
        );
        assert.deepEqual(r.rows, [
          { tenant_id: String(tenant), id: String(id), total: tenant * 100 + id },
        ]);
      }
    });
    const shared = (await pipelinedCount()) - before;
    assert.ok(shared > 60, `simple reads that shared a backend: ${shared}`);
  });

  test('40 clients over 2 backends per node each get their own rows', async () => {
    const before = await pipelinedCount();
    await withClients(TENANTS, async (cl, i) => {
      const tenant = i + 1;
      for (let k = 0; k < 100; k++) {
        const id = (k % ROWS_PER_TENANT) + 1;
        const r = await cl.query({ ...READ, values: [tenant, id] });
        assert.deepEqual(r.rows, [
          { tenant_id: String(tenant), id: String(id), total: tenant * 100 + id },
        ]);
      }
    });
    const shared = (await pipelinedCount()) - before;
    assert.ok(shared > 100, `reads that shared a backend: ${shared}`);
    for (const server of c.byName.values()) {
      // Two pooled backends and this query's own. A backend the pool closed is still listed
      // until its process exits, so a count above that is looked at again for a few seconds.
      const count = async () =>
        Number(
          (
            await server.query<{ n: string }>(
              "select count(*) n from pg_stat_activity where datname = 'postgres' and backend_type = 'client backend' and application_name not in ('psql', 'tessera-router ddl watch')",
            )
          )[0]!.n,
        );
      let n = await count();
      for (let tries = 0; n > 3 && tries < 30; tries++) {
        await new Promise((r) => setTimeout(r, 100));
        n = await count();
      }
      assert.ok(n <= 3, `backends on a node: ${n}`);
    }
  });

  test("one client's error stays its own; writes in between never share", async () => {
    const DIV = {
      name: 'div',
      text: 'select total / $3 as q from orders where tenant_id = $1 and id = $2',
    };
    const errors: string[] = [];
    await withClients(TENANTS, async (cl, i) => {
      const tenant = i + 1;
      for (let k = 0; k < 40; k++) {
        const divisor = (i + k) % 7 === 0 ? 0 : 1;
        try {
          const r = await cl.query({ ...DIV, values: [tenant, 1, divisor] });
          assert.notEqual(divisor, 0, 'a division by zero answered');
          assert.equal(r.rows[0].q, tenant * 100 + 1);
        } catch (e) {
          const code = (e as { code?: string }).code ?? String(e);
          if (divisor !== 0 || code !== '22012') throw e;
          errors.push(code);
        }
        if (k % 10 === 0) {
          await cl.query({
            name: 'bump',
            text: 'update orders set total = total where tenant_id = $1 and id = $2',
            values: [tenant, 2],
          });
        }
        // Still usable, and not inside a transaction.
        const r = await cl.query({ ...READ, values: [tenant, 3] });
        assert.equal(r.rows[0].total, tenant * 100 + 3);
      }
      const t = await cl.query('show transaction_isolation');
      assert.equal(t.rows.length, 1);
    });
    assert.ok(errors.length > 0);
  });

  test('a cancel waits for its own statement and leaves the one ahead of it alone', async () => {
    // One backend for home: the slow reads run there one after the other.
    await c.restartRouter({ poolSize: 1, pipelineDepth: 8 });
    await withSlowPair(async (a, b) => {
      const before = await pipelinedCount();
      const first = a.query({ ...SLOW, values: [8_000_000] });
      await new Promise((r) => setTimeout(r, 50));
      // Long enough that the cancel, sent once it is the one running, always lands in time.
      const second = b.query({ ...SLOW, values: [200_000_000] });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal((await pipelinedCount()) - before, 1, 'the second read joined the first');
      const { pid, secret } = keyOf(b);
      await sendCancel(c.router.port, pid, secret);
      const [ra, rb] = await Promise.allSettled([first, second]);
      assert.equal(
        ra.status,
        'fulfilled',
        `the read ahead: ${String((ra as PromiseRejectedResult).reason)}`,
      );
      assert.equal((ra as PromiseFulfilledResult<pg.QueryResult>).value.rows[0].n, '8000000');
      assert.equal(rb.status, 'rejected');
      assert.equal((rb as PromiseRejectedResult).reason.code, '57014');
      // Both go on.
      assert.equal((await b.query({ ...SLOW, values: [3] })).rows[0].n, '3');
    });
  });

  test('reads gather on an open lane before they take an idle backend', async () => {
    // Four backends for three clients: before, each read took an idle backend of its own.
    await c.restartRouter({ poolSize: 4, pipelineDepth: 8 });
    const before = await pipelinedCount();
    await withClients(3, async (cl, i) => {
      for (let k = 0; k < 200; k++) {
        const r = await cl.query({ ...READ, values: [i + 1, 2] });
        assert.equal(r.rows[0].total, (i + 1) * 100 + 2);
      }
    });
    const shared = (await pipelinedCount()) - before;
    assert.ok(shared > 0, `reads that shared a backend: ${shared}`);
  });

  test('a read does not queue behind a slow one while a backend is idle', async () => {
    await c.restartRouter({ poolSize: 2, pipelineDepth: 8 });
    await withSlowPair(async (a, b) => {
      let slowDone = false;
      const slow = a.query({ ...SLOW, values: [8_000_000] }).then((r) => {
        slowDone = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 50));
      // The same statement, prepared on the slow read's lane: it could join it, and must not.
      const fast = await b.query({ ...SLOW, values: [3] });
      assert.equal(fast.rows[0].n, '3');
      assert.equal(slowDone, false, 'the fast read waited for the slow one');
      assert.equal((await slow).rows[0].n, '8000000');
    });
  });

  test('--pipeline-depth 1: no sharing', async () => {
    await c.restartRouter({ poolSize: 2, pipelineDepth: 1 });
    const before = await pipelinedCount();
    await withClients(20, async (cl, i) => {
      for (let k = 0; k < 20; k++) {
        const r = await cl.query({ ...READ, values: [i + 1, 1] });
        assert.equal(r.rows[0].total, (i + 1) * 100 + 1);
      }
    });
    assert.equal(await pipelinedCount(), before);
  });
});
