// pg_dump, pg_restore and psql's describe commands through the router, against plain Postgres:
// a dump of the routed database (sharded, colocated, reference and global tables, views, a
// sequence, an index) restored into a fresh plain Postgres gives the same contents, and carries
// none of Tessera's fences; a plain database's dump restored through the router gives the same
// contents; `\d` shows what plain Postgres shows; the size functions of a sharded table add up
// every node's copy (simple and extended protocol).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { setUpBoth } from '../testing/drivers.js';

const run = promisify(execFile);

let c: TestCluster;
let plain: PgServer;
let work: string;

const SCHEMA = [
  'create table countries (code text primary key, name text not null)',
  'create table orders (tenant_id bigint not null, id int not null, total numeric(12,2), code text references countries (code), note text, primary key (tenant_id, id))',
  'create table order_items (tenant_id bigint not null, order_id int not null, n int not null, qty int, primary key (tenant_id, order_id, n), foreign key (tenant_id, order_id) references orders)',
  'create index orders_total on orders (total)',
  'create table audit (id bigserial primary key, note text not null)',
  'create sequence invoice_numbers start 1000',
];
const DATA = [
  "insert into countries values ('nl', 'Netherlands'), ('fr', 'France'), ('de', 'Germany')",
  `insert into orders values ${Array.from({ length: 40 }, (_, i) => `(${i + 1}, ${i % 3}, ${(i * 7.5).toFixed(2)}, '${['nl', 'fr', 'de'][i % 3]}', ${i % 4 === 0 ? 'null' : `'note\\t${i}'`})`).join(', ')}`,
  `insert into order_items values ${Array.from({ length: 40 }, (_, i) => `(${i + 1}, ${i % 3}, 1, ${i})`).join(', ')}`,
  "insert into audit (note) values ('opened'), ('closed')",
  "select nextval('invoice_numbers')",
  "select nextval('invoice_numbers')",
  'create view order_totals as select code, count(*) as n, sum(total) as total from orders group by code',
  'create view big_orders as select tenant_id, id, total from orders where total > 100',
];

/** Every table's and view's rows in a stable order, and the sequence: what "same contents" means. */
const CONTENTS = [
  'select * from countries order by code',
  'select * from orders order by tenant_id, id',
  'select * from order_items order by tenant_id, order_id, n',
  'select * from audit order by id',
  'select * from order_totals order by code',
  'select * from big_orders order by tenant_id',
  'select last_value from invoice_numbers',
];

async function contents(url: string): Promise<string[]> {
  const cl = new pg.Client({ connectionString: url });
  await cl.connect();
  try {
    const out: string[] = [];
    for (const sql of CONTENTS) out.push(JSON.stringify((await cl.query(sql)).rows));
    return out;
  } finally {
    await cl.end();
  }
}

before(async () => {
  [c, plain] = await Promise.all([startTestCluster(), startPostgres({ name: 'pg-dump-plain' })]);
  work = mkdtempSync(join(tmpdir(), 'tessera-pg-dump-'));
  await setUpBoth(c.url(), plain, [...SCHEMA, ...DATA]);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('pg_dump and pg_restore through the router', () => {
  test('a dump of the routed database restores into plain Postgres with the same contents', async () => {
    const file = join(work, 'routed.dump');
    await run('pg_dump', ['-Fc', '-f', file, c.url()]);
    await plain.query('create database from_router');
    await run('pg_restore', [
      '--no-owner',
      '--exit-on-error',
      '-d',
      plain.url('from_router'),
      file,
    ]);
    assert.deepEqual(await contents(plain.url('from_router')), await contents(c.url()));
    assert.deepEqual(await contents(c.url()), await contents(plain.url()));
  });

  test("its schema is plain Postgres's own, without the nodes' fences", async () => {
    // pg_dump 15.14+ writes a random \restrict key into each dump: not part of the schema.
    const schema = async (url: string): Promise<string> =>
      (await run('pg_dump', ['--schema-only', url])).stdout.replace(/^\\(un)?restrict .*$/gm, '');
    const routed = await schema(c.url());
    const direct = await schema(plain.url());
    assert.doesNotMatch(routed, /tessera/);
    assert.equal(routed, direct);
  });

  test('a plain database dumped and restored through the router has the same contents', async () => {
    const file = join(work, 'plain.dump');
    await run('pg_dump', ['-Fc', '-f', file, plain.url()]);
    // A database is made on every node (CREATE DATABASE through a router makes it on home only).
    for (const server of c.byName.values()) await server.query('create database restored');
    const { stderr } = await run('pg_restore', [
      '--no-owner',
      '--exit-on-error',
      '-d',
      c.url('restored'),
      file,
    ]);
    assert.equal(stderr, '');
    assert.deepEqual(await contents(c.url('restored')), await contents(plain.url()));
    // The rows are on their owners: a node holds only keys its fence admits (else the COPY failed).
    for (const server of c.data) {
      const n = await server.query<{ n: string }>(
        'select count(*) as n from orders',
        [],
        'restored',
      );
      assert.ok(Number(n[0]!.n) > 0 && Number(n[0]!.n) < 40);
    }
  });
});

describe('psql and the size functions', () => {
  async function psql(url: string, command: string): Promise<string> {
    return (await run('psql', ['-X', '-d', url, '-c', command])).stdout;
  }

  test('\\d of a sharded table, of a view, and \\d+ show what plain Postgres shows', async () => {
    for (const command of ['\\d orders', '\\d+ order_items', '\\d+ order_totals', '\\di'])
      assert.equal(await psql(c.url(), command), await psql(plain.url(), command), command);
  });

  test("sizes of a sharded table and its indexes are every node's copies added up", async () => {
    const measures = [
      "pg_relation_size('orders')",
      "pg_relation_size('orders', 'fsm')",
      "pg_table_size('orders')",
      "pg_indexes_size('orders')",
      "pg_total_relation_size('public.orders')",
      "pg_relation_size('orders_total')",
    ];
    const want: bigint[] = measures.map(() => 0n);
    for (const server of c.byName.values()) {
      const sql = `select ${measures.map((m, k) => `${m} as m${k}`).join(', ')}`;
      const row = (await server.query(sql))[0] as Record<string, string>;
      Object.values(row).forEach((v, i) => (want[i]! += BigInt(v)));
    }
    const sql = `select ${measures.map((m, i) => `${m} as m${i}`).join(', ')}`;
    const cl = new pg.Client({ connectionString: c.url() });
    await cl.connect();
    try {
      for (const query of [sql, { text: sql, name: 'sizes' }]) {
        const row = (await cl.query(query)).rows[0] as Record<string, string>;
        assert.deepEqual(Object.values(row).map(BigInt), want);
      }
      // psql's \dt+ measures with pg_table_size(c.oid): the same sum.
      const listed = await psql(c.url(), '\\dt+ orders');
      const pretty = (await cl.query(`select pg_size_pretty(${want[2]!}::bigint) as p`)).rows[0].p;
      assert.match(listed, new RegExp(`\\| ${pretty} `));
      // A global table is measured where it is.
      const audit = (await cl.query("select pg_table_size('audit') as n")).rows[0].n;
      assert.equal(audit, (await c.home.query("select pg_table_size('audit') as n"))[0]!['n']);
    } finally {
      await cl.end();
    }
  });
});
