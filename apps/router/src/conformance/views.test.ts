// Views over sharded and reference tables, against one plain Postgres with the same rows, through
// every driver mode: CREATE [OR REPLACE] VIEW and DROP VIEW reach every node (in one transaction),
// reads through a view are planned as its query (aggregating views merged at the router, then
// filtered, ordered and limited; views of views; joins; a view's name resolved by search_path),
// views over reference tables read and written like them, views over global tables stay on home.
// What the router cannot do exactly is refused with 0A000: writes through a view over sharded
// tables, a view reading both sharded and global tables.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { DRIVER_MODES, openDriver, setUpBoth, type Outcome } from '../testing/drivers.js';
import { rawCopy } from '../testing/copy.js';

let c: TestCluster;
let plain: PgServer;

const SETUP = [
  'create table orders (tenant_id bigint not null, id int not null, qty int, code text)',
  'create table countries (code text primary key, name text)',
  'create table settings (k text primary key, v int)',
  `insert into orders values ${Array.from({ length: 60 }, (_, i) => `(${i + 1}, ${i % 7}, ${i % 5}, '${['nl', 'fr', 'de'][i % 3]}')`).join(', ')}`,
  "insert into countries values ('nl', 'Netherlands'), ('fr', 'France'), ('de', 'Germany')",
  "insert into settings values ('a', 1)",
  'create view order_totals as select id, count(*) as n, sum(qty) as total from orders group by id',
  'create view big_orders as select * from orders where qty > 2',
  'create view country_names as select code, upper(name) as name from countries',
  'create view country_codes as select code, name from countries',
  'create view busy as select * from order_totals where n > 8',
  'create view settings_view as select * from settings',
  'create schema app',
  'create view app.big_orders as select tenant_id from orders where qty = 0',
];

before(async () => {
  [c, plain] = await Promise.all([startTestCluster(), startPostgres({ name: 'views-plain' })]);
  await setUpBoth(c.url(), plain, SETUP);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

/** Each statement on both sides, in one session each; what the client saw, side by side. */
async function both(mode: (typeof DRIVER_MODES)[number], steps: readonly string[]) {
  const r = await openDriver(mode, c.url());
  const p = await openDriver(mode, plain.url());
  const out: { router: Outcome; plain: Outcome }[] = [];
  try {
    for (const sql of steps) out.push({ router: await r.run(sql), plain: await p.run(sql) });
  } finally {
    await r.end();
    await p.end();
  }
  return out;
}

const READS = [
  'select count(*) from big_orders',
  'select * from order_totals order by id',
  'select * from order_totals where n > 8 order by total desc, id limit 3',
  'select count(*) from order_totals',
  'select n, id from order_totals order by n desc, id offset 2',
  'select * from busy order by id',
  'select * from big_orders where tenant_id = 3',
  'select b.tenant_id, cn.name from big_orders b join country_names cn on cn.code = b.code order by 1',
  'select * from country_names order by code',
  'select t.id, t.n from order_totals t order by t.id',
  'select sum(qty), count(*) from big_orders where code = $$fr$$',
  'select * from settings_view',
  'set search_path = app, public',
  'select count(*) from big_orders',
  'reset search_path',
];

describe('reads through views', () => {
  for (const mode of DRIVER_MODES)
    test(`answer as one Postgres (${mode})`, async () => {
      for (const { router, plain: p } of await both(mode, READS)) {
        assert.equal(p.sqlstate, undefined, `${p.sql}: ${p.message}`);
        assert.deepEqual(
          { tag: router.tag, rows: router.rows, sqlstate: router.sqlstate },
          { tag: p.tag, rows: p.rows, sqlstate: p.sqlstate },
          `${router.sql}: ${router.message ?? ''}`,
        );
      }
    });

  test('COPY of a view query across nodes', async () => {
    const sql = 'copy (select * from order_totals order by id) to stdout with (format csv, header)';
    assert.deepEqual(await rawCopy(c.router.port, sql), await rawCopy(plain.port, sql));
  });
});

describe('DDL on views', () => {
  test('CREATE VIEW over sharded or reference tables is on every node; over global ones on home', async () => {
    for (const [name, server] of c.byName) {
      const rows = await server.query<{ v: string }>(
        "select string_agg(table_name, ',' order by table_name) as v from information_schema.views where table_schema in ('public', 'app')",
      );
      const want =
        name === 'home'
          ? 'big_orders,big_orders,busy,country_codes,country_names,order_totals,settings_view'
          : 'big_orders,big_orders,busy,country_codes,country_names,order_totals';
      assert.equal(rows[0]?.v, want, name);
    }
  });

  test('writes, replacing and dropping', async () => {
    const steps = [
      // A view over reference tables is written like one: on every node.
      "insert into country_codes values ('be', 'Belgium')",
      'select count(*) from countries',
      'create or replace view big_orders as select * from orders where qty > 3',
      'select count(*) from big_orders',
      'drop view busy',
      'select * from busy',
      'create view busy as select id from order_totals where total > 10',
      'select * from busy order by id',
    ];
    for (const { router, plain: p } of await both('pg-simple', steps))
      assert.deepEqual(
        { tag: router.tag, rows: router.rows, sqlstate: router.sqlstate },
        { tag: p.tag, rows: p.rows, sqlstate: p.sqlstate },
        `${router.sql}: ${router.message ?? ''}`,
      );
    for (const server of c.data)
      assert.equal(
        (await server.query<{ n: string }>('select count(*) as n from countries'))[0]?.n,
        '4',
      );
  });

  test('refused: writes through a view over sharded tables, a view over sharded and global tables', async () => {
    const steps = [
      "insert into big_orders values (1000, 1, 9, 'nl')",
      'update big_orders set qty = 9 where tenant_id = 4',
      'create view mixed as select o.id from orders o join settings s on s.v = o.id',
    ];
    for (const { router, plain: p } of await both('pg-simple', steps)) {
      assert.equal(p.sqlstate, undefined, p.sql);
      assert.equal(router.sqlstate, '0A000', router.sql);
      assert.ok((router.message ?? '').length > 20, router.message);
    }
  });

  test("a role without the right to read a view gets Postgres's error", async () => {
    await setUpBoth(c.url(), plain, [
      'create role viewer login',
      'grant select on orders to viewer',
    ]);
    const viaRouter = await openDriver('pg-simple', c.url().replace('postgres@', 'viewer@'));
    const direct = await openDriver('pg-simple', plain.url('postgres', 'viewer'));
    try {
      const r = await viaRouter.run('select count(*) from order_totals');
      const p = await direct.run('select count(*) from order_totals');
      assert.equal(p.sqlstate, '42501');
      assert.equal(r.sqlstate, '42501');
      assert.equal(r.message, p.message);
    } finally {
      await viaRouter.end();
      await direct.end();
    }
  });
});
