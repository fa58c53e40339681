// Partitioned tables whose partitions are declared as their parent is, differential: the same
// statements through node-postgres (simple and named statements) against the router and one
// plain Postgres. A partition not declared as its parent is refused (0A000, with the command
// that declares it) and created nowhere: the router would look for its rows where they are not.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { openDriver, type DriverMode } from '../testing/drivers.js';

let c: TestCluster;
let plain: PgServer;

const sharded = (name: string, keyColumn = 'tenant_id') =>
  ({ name, kind: 'sharded', keyspace: 'tenants', keyColumn }) as const;

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({
      keyspaces: [{ name: 'tenants', keyType: KeyType.BIGINT, ranges: 4 }],
      tables: [
        sharded('m'),
        sharded('m_lo'),
        sharded('m_hi'),
        sharded('m_other', 'id'),
        { name: 'r', kind: 'reference' },
        { name: 'r_a', kind: 'reference' },
      ],
    }),
    startPostgres({ name: 'partitions-plain' }),
  ]);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const plainUrl = (): string => `postgres://postgres@127.0.0.1:${plain.port}/postgres`;

const DECLARED = [
  'create table m (tenant_id bigint not null, id int not null, v text, primary key (tenant_id, id)) partition by range (tenant_id)',
  'create table m_lo partition of m for values from (minvalue) to (1000)',
  'create table m_hi partition of m for values from (1000) to (maxvalue)',
  "insert into m select g, g % 7, 'v' || g from generate_series(1, 2000, 7) g",
  'select count(*), sum(tenant_id) from m',
  'select count(*), min(tenant_id), max(tenant_id) from m_lo',
  'select tenant_id, v from m where tenant_id = 8',
  "insert into m_hi values (1500, 1, 'direct')",
  'insert into m_lo values (1500, 2, null)',
  'select count(*) from m_hi',
  "update m set v = 'moved' where tenant_id = 1500",
  'select tenant_id, id, v from m_hi where tenant_id = 1500 order by id',
  'alter table m_lo add column w int',
  'drop table m_hi',
  'select count(*) from m',
  'create table r (id int primary key, v text) partition by list (id)',
  'create table r_a partition of r for values in (1, 2, 3)',
  "insert into r values (1, 'one'), (2, 'two')",
  'select * from r order by id',
  'select count(*) from r_a',
  'drop table r',
  'drop table m',
];

for (const mode of ['pg-simple', 'pg-named'] as DriverMode[]) {
  test(`partitions declared as their parent read and write as on one Postgres (${mode})`, async () => {
    const [router, direct] = await Promise.all([
      openDriver(mode, c.url()),
      openDriver(mode, plainUrl()),
    ]);
    try {
      for (const sql of DECLARED) {
        const [g, w] = [await router.run(sql), await direct.run(sql)];
        assert.deepEqual(
          { rows: g.rows, sqlstate: g.sqlstate },
          { rows: w.rows, sqlstate: w.sqlstate },
          `${sql}: router ${JSON.stringify(g)} vs Postgres ${JSON.stringify(w)}`,
        );
      }
    } finally {
      await Promise.all([router.end(), direct.end()]);
    }
  });
}

/** Whether a table named `name` exists on each node (home, data1, data2). */
async function existsOnNodes(name: string): Promise<boolean[]> {
  return Promise.all(
    [c.home, ...c.data].map(async (node) => {
      const client = new pg.Client({ host: '127.0.0.1', port: node.port, user: 'postgres' });
      await client.connect();
      try {
        const r = await client.query('select to_regclass($1) is not null as e', [name]);
        return r.rows[0].e as boolean;
      } finally {
        await client.end();
      }
    }),
  );
}

describe('a partition not declared as its parent', () => {
  const PARENT =
    'create table p (tenant_id bigint not null, v text) partition by range (tenant_id)';
  const cases: [string, string, string, RegExp][] = [
    [
      'undeclared, of a sharded table',
      'create table p_x partition of m for values from (0) to (10)',
      'public.p_x',
      /declare it first: tessera table distribute public\.p_x --column tenant_id --keyspace tenants/,
    ],
    [
      'sharded by another column, of a sharded table',
      'create table m_other partition of m for values from (0) to (10)',
      'public.m_other',
      /declare it first: tessera table distribute public\.m_other --column tenant_id/,
    ],
    [
      'undeclared, of a reference table',
      'create table p_r partition of r for values in (9)',
      'public.p_r',
      /declare it first: tessera table reference public\.p_r/,
    ],
    [
      'sharded, of an undeclared (global) table',
      'create table m_lo partition of p for values from (0) to (10)',
      'public.m_lo',
      /create the partition under another name/,
    ],
  ];
  for (const [what, sql, name, hint] of cases) {
    test(`${what}: refused with 0A000 and how to declare it, created nowhere`, async () => {
      const router = new pg.Client({ connectionString: c.url() });
      const direct = new pg.Client({ connectionString: plainUrl() });
      await Promise.all([router.connect(), direct.connect()]);
      try {
        for (const client of [router, direct]) {
          for (const t of ['m', 'r', 'p']) await client.query(`drop table if exists ${t}`);
          await client.query(
            'create table m (tenant_id bigint not null, v text) partition by range (tenant_id)',
          );
          await client.query('create table r (id int, v text) partition by list (id)');
          await client.query(PARENT);
        }
        await direct.query(sql);
        await assert.rejects(router.query(sql), (e: pg.DatabaseError) => {
          assert.equal(e.code, '0A000', e.message);
          assert.match(e.message, /cannot be a partition of/);
          assert.match(e.hint ?? '', hint);
          return true;
        });
        assert.deepEqual(await existsOnNodes(name), [false, false, false]);
        await router.query('select 1');
      } finally {
        for (const client of [router, direct])
          for (const t of ['m', 'r', 'p']) await client.query(`drop table if exists ${t}`);
        await Promise.all([router.end(), direct.end()]);
      }
    });
  }
});
