// node-postgres through the router: DDL reaching every node, one-tenant reads and writes,
// reference joins, global tables, prepared statements and a pg-cursor portal.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

let c: TestCluster;
let client: pg.Client;

before(async () => {
  c = await startTestCluster();
  client = new pg.Client({ connectionString: c.url() });
  await client.connect();
});
after(async () => {
  await client?.end().catch(() => undefined);
  await c?.dispose();
});

describe('node-postgres through the router', () => {
  test('DDL on declared tables reaches every node with the fence', async () => {
    await client.query(
      'create table orders (tenant_id bigint not null, id bigint not null, total int, country text, primary key (tenant_id, id))',
    );
    await client.query('create table countries (code text primary key, name text)');
    await client.query('create table settings (k text primary key, v text)');
    for (const [name, server] of c.byName) {
      const rows = await server.query<{ conname: string }>(
        "select conname from pg_constraint where conrelid = 'orders'::regclass and conname = 'tessera_owns'",
      );
      assert.equal(rows.length, 1, `fence on ${name}`);
      const ref = await server.query("select 1 from pg_class where relname = 'countries'");
      assert.equal(ref.length, 1, `countries on ${name}`);
      const global = await server.query("select 1 from pg_class where relname = 'settings'");
      assert.equal(global.length, name === 'home' ? 1 : 0, `settings on ${name}`);
    }
  });

  test('one-tenant writes and reads, reference join, global table', async () => {
    await client.query("insert into countries values ('fr', 'France'), ('de', 'Germany')");
    for (let t = 1; t <= 20; t++) {
      await client.query(
        'insert into orders (tenant_id, id, total, country) values ($1, $2, $3, $4)',
        [t, 1, t * 10, t % 2 ? 'fr' : 'de'],
      );
    }
    const r = await client.query(
      'select o.total, c.name from orders o join countries c on c.code = o.country where o.tenant_id = $1',
      [3],
    );
    assert.deepEqual(r.rows, [{ total: 30, name: 'France' }]);
    const u = await client.query('update orders set total = total + 1 where tenant_id = 4');
    assert.equal(u.rowCount, 1);
    await client.query("insert into settings values ('a', 'b')");
    assert.deepEqual((await client.query('select v from settings')).rows, [{ v: 'b' }]);
    let total = 0;
    for (const server of c.data)
      total += Number((await server.query<{ n: string }>('select count(*) n from orders'))[0]!.n);
    assert.equal(total, 20);
  });

  test('named prepared statements', async () => {
    for (let t = 1; t <= 10; t++) {
      const r = await client.query({
        name: 'by-tenant',
        text: 'select total from orders where tenant_id = $1',
        values: [t],
      });
      assert.equal(r.rows.length, 1);
    }
  });

  test('a transaction on one node', async () => {
    await client.query('begin');
    await client.query('update orders set total = 0 where tenant_id = 5');
    assert.equal(
      (await client.query('select total from orders where tenant_id = 5')).rows[0].total,
      0,
    );
    await client.query('rollback');
    assert.equal(
      (await client.query('select total from orders where tenant_id = 5')).rows[0].total,
      50,
    );
  });

  test('a pg-cursor portal', async () => {
    for (let i = 2; i <= 30; i++)
      await client.query('insert into orders (tenant_id, id, total) values (7, $1, $2)', [i, i]);
    const cursor = client.query(
      new Cursor('select id from orders where tenant_id = $1 order by id', [7]),
    );
    const first = await cursor.read(10);
    const second = await cursor.read(10);
    const rest = await cursor.read(100);
    await cursor.close();
    assert.equal(first.length + second.length + rest.length, 30);
    assert.equal(second[0]?.id, '11');
  });

  test('refusals name why', async () => {
    await assert.rejects(
      client.query('select tenant_id, row_number() over () from orders'),
      (e: { code?: string; message: string }) =>
        e.code === '0A000' && /window functions/.test(e.message),
    );
    await assert.rejects(
      client.query('update orders set tenant_id = 3 where tenant_id = 1'),
      (e: { code?: string }) => e.code === '0A000',
    );
    await assert.rejects(
      client.query('delete from orders where total > (select avg(total) from orders)'),
      (e: { code?: string; message: string }) =>
        e.code === '0A000' && /DELETE whose rows span nodes/.test(e.message),
    );
    await assert.rejects(
      client.query(
        'select * from orders o join settings s on s.k = o.country where o.tenant_id = 1',
      ),
      (e: { code?: string; message: string }) =>
        e.code === '0A000' && /global table/.test(e.message),
    );
    // The connection still works.
    assert.equal((await client.query('select 1 as x')).rows[0].x, 1);
  });
});
