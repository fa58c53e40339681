// search_path name resolution, differential: the same statements through node-postgres (simple
// and named extended statements) against the router and one plain Postgres with the same schema
// and rows. Tables of one name in two schemas, sharded (t), reference (r), global on home only
// (s9.tenants shadowing sharded public.tenants, g in both schemas); SET, RESET, SET LOCAL in a
// transaction and after it, startup options, a role's default search_path, `$user`; reads and
// writes (the qualified contents of every table are compared after the writes).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { openDriver, type DriverMode, type Outcome } from '../testing/drivers.js';

let c: TestCluster;
let plain: PgServer;

const SCHEMA = [
  'create schema s9',
  'create table public.t (tenant_id bigint primary key, v text)',
  'create table s9.t (tenant_id bigint primary key, v text)',
  'create table public.r (id int primary key, v text)',
  'create table s9.r (id int primary key, v text)',
  'create table public.tenants (id bigint primary key, name text)',
];
const ROWS = [
  "insert into public.t (tenant_id, v) values (1, 'p1'), (2, 'p2'), (3, 'p3'), (4, 'p4')",
  "insert into s9.t (tenant_id, v) values (1, 's1'), (2, 's2')",
  "insert into public.r (id, v) values (1, 'pr')",
  "insert into s9.r (id, v) values (1, 'sr'), (2, 'sr2')",
  "insert into public.tenants (id, name) values (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e'), (6, 'f')",
];
/** Global tables: on home only (the router's nodes) or the plain server. */
const GLOBAL = [
  'create table s9.tenants (id bigint primary key, name text)',
  "insert into s9.tenants values (1, 'x'), (2, 'y'), (3, 'z')",
  'create table public.g (id int)',
  'create table s9.g (id int)',
  'insert into public.g values (1)',
  'insert into s9.g values (1), (2)',
  'create schema app_user',
  'create table app_user.g (id int)',
  'insert into app_user.g values (1), (2), (3)',
];
/** On every node and the plain server: a role whose default search_path is s9, public. */
const ROLES = [
  'create role app_user login superuser',
  'create role pathy login superuser',
  'alter role pathy set search_path = s9, public',
];

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({
      keyspaces: [{ name: 'tenants', keyType: KeyType.BIGINT, ranges: 4 }],
      tables: [
        { name: 't', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
        { name: 't', schema: 's9', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
        { name: 'r', kind: 'reference' },
        { name: 'r', schema: 's9', kind: 'reference' },
        { name: 'tenants', kind: 'sharded', keyspace: 'tenants', keyColumn: 'id' },
      ],
    }),
    startPostgres({ name: 'search-path-plain' }),
  ]);
  for (const node of [c.home, ...c.data]) for (const sql of ROLES) await node.query(sql);
  const setup = await openDriver('pg-simple', c.url());
  for (const sql of [...SCHEMA, ...ROWS]) {
    const o = await setup.run(sql);
    assert.equal(o.sqlstate, undefined, `${sql}: ${o.message}`);
  }
  await setup.end();
  for (const sql of GLOBAL) await c.home.query(sql);
  for (const sql of [...ROLES, ...SCHEMA, ...ROWS, ...GLOBAL]) await plain.query(sql);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const routerUrl = (user = 'postgres', query = ''): string =>
  c.url().replace('postgres@', `${user}@`) + query;
const plainUrl = (user = 'postgres', query = ''): string =>
  `postgres://${user}@127.0.0.1:${plain.port}/postgres${query}`;

/** Every table's rows, qualified (what the writes changed, wherever they landed). */
const CONTENTS = [
  'select tenant_id, v from public.t order by 1',
  'select tenant_id, v from s9.t order by 1',
  'select id, v from public.r order by 1',
  'select id, v from s9.r order by 1',
  'select id, name from public.tenants order by 1',
  'select id, name from s9.tenants order by 1',
];

interface Case {
  readonly name: string;
  readonly statements: readonly string[];
  readonly user?: string;
  /** Query string of the connection URL (startup options). */
  readonly query?: string;
}

const CASES: readonly Case[] = [
  {
    name: "the issue's case: global s9.tenants shadows sharded public.tenants",
    statements: [
      'set search_path = s9, public',
      'select count(*) from tenants',
      'select id, name from tenants order by id',
      'reset search_path',
      'select count(*) from tenants',
    ],
  },
  {
    name: 'sharded t and reference r in two schemas, reads',
    statements: [
      'select tenant_id, v from t order by 1',
      'select v from t where tenant_id = 1',
      'select id, v from r order by 1',
      'set search_path = s9, public',
      'select tenant_id, v from t order by 1',
      'select v from t where tenant_id = 1',
      'select v from t where tenant_id = 3',
      'select id, v from r order by 1',
      'select t.v, r.v from t join r on r.id = 1 where t.tenant_id = 2',
      'set search_path to public, s9',
      'select v from t where tenant_id = 1',
      'select id, v from r order by 1',
      'set search_path = nosuch, s9',
      'select count(*) from t',
      'select count(*) from g',
      'set search_path = "$user", public',
      'select count(*) from g',
    ],
  },
  {
    name: 'SET LOCAL search_path lasts until the transaction ends',
    statements: [
      'begin',
      'set local search_path = s9, public',
      'select count(*) from tenants',
      'select v from t where tenant_id = 1',
      'commit',
      'select count(*) from tenants',
      'select v from t where tenant_id = 1',
      'begin',
      'set local search_path = s9',
      'select v from t where tenant_id = 2',
      'rollback',
      'select v from t where tenant_id = 2',
      'set search_path = s9',
      'begin',
      'set local search_path = public',
      'select name from tenants where id = 1',
      'savepoint a',
      'set local search_path = s9',
      'select name from tenants where id = 1',
      'rollback to savepoint a',
      'select name from tenants where id = 1',
      'commit',
      'select name from tenants where id = 1',
      'begin',
      'set search_path = public',
      'rollback',
      'select name from tenants where id = 1',
    ],
  },
  {
    name: "a role's default search_path (ALTER ROLE ... SET)",
    user: 'pathy',
    statements: [
      'show search_path',
      'select count(*) from tenants',
      'select v from t where tenant_id = 1',
      'set search_path = public',
      'select count(*) from tenants',
      'reset search_path',
      'select count(*) from tenants',
    ],
  },
  {
    name: 'startup options -c search_path',
    query: '?options=-c%20search_path%3Ds9%2Cpublic',
    statements: [
      'select count(*) from tenants',
      'select v from t where tenant_id = 2',
      'set search_path = public',
      'select count(*) from tenants',
      'reset search_path',
      'select count(*) from tenants',
    ],
  },
  {
    name: '$user resolves to the role name',
    user: 'app_user',
    statements: ['select count(*) from g', 'set search_path = public', 'select count(*) from g'],
  },
  {
    name: 'writes land in the schema the path names',
    statements: [
      'delete from public.t where tenant_id >= 7',
      'delete from s9.t where tenant_id >= 7',
      'delete from s9.r where id >= 5',
      'delete from s9.tenants where id >= 9',
      'set search_path = s9, public',
      "insert into t (tenant_id, v) values (7, 'new7'), (8, 'new8')",
      "update t set v = 'upd' where tenant_id = 1",
      "insert into r (id, v) values (5, 'r5')",
      "update r set v = 'rupd' where id = 2",
      'delete from t where tenant_id = 2',
      "insert into tenants (id, name) values (9, 'w')",
      "update tenants set name = 'uu' where id = 1",
      'set search_path = public',
      "update t set v = 'pub' where tenant_id = 4",
      ...CONTENTS,
    ],
  },
];

async function runCase(mode: DriverMode, url: string, k: Case): Promise<Outcome[]> {
  const session = await openDriver(mode, url);
  const out: Outcome[] = [];
  try {
    for (const sql of k.statements) out.push(await session.run(sql));
  } finally {
    await session.end();
  }
  return out;
}

const shown = (o: Outcome): unknown => ({
  sql: o.sql,
  rows: o.rows,
  sqlstate: o.sqlstate,
  ...(o.sqlstate !== undefined ? { message: o.message } : {}),
});

for (const mode of ['pg-simple', 'pg-named'] as const) {
  describe(`search_path through node-postgres (${mode})`, () => {
    for (const k of CASES) {
      test(k.name, async () => {
        const want = await runCase(mode, plainUrl(k.user, k.query), k);
        const got = await runCase(mode, routerUrl(k.user, k.query), k);
        for (let i = 0; i < want.length; i++) {
          const w = want[i]!;
          const g = got[i]!;
          assert.deepEqual(
            { sql: g.sql, rows: g.rows, sqlstate: g.sqlstate },
            { sql: w.sql, rows: w.rows, sqlstate: w.sqlstate },
            `statement ${i}: router ${JSON.stringify(shown(g))} vs Postgres ${JSON.stringify(shown(w))}`,
          );
        }
      });
    }
  });
}

describe('a table declared after login', () => {
  test("behind a schema home may hold it: the session reads home's names again, never guesses", async () => {
    const session = await openDriver('pg-simple', routerUrl());
    try {
      // Made on the nodes directly: no DDL through the router tells its sessions to look again.
      for (const node of [c.home, ...c.data])
        await node.query('create table public.late (tenant_id bigint, v text)');
      await c.admin.distributeTable({
        schema: 'public',
        name: 'late',
        keyColumn: 'tenant_id',
        keyspace: 'tenants',
      });
      await waitFor(() => c.router.catalog()?.table('public', 'late') !== undefined);
      assert.equal((await session.run('set search_path = s9, public')).sqlstate, undefined);
      // The catalog's tables changed: the session reads home's names again before its statement.
      const o = await session.run('select count(*) from late');
      assert.deepEqual(o.rows, [{ count: '0' }], JSON.stringify(o));
      const q = await session.run('select count(*) from public.late');
      assert.deepEqual(q.rows, [{ count: '0' }]);
    } finally {
      await session.end();
    }
    // A session that logs in now knows home's tables of that name: no refusal.
    const fresh = await openDriver(
      'pg-simple',
      routerUrl('postgres', '?options=-c%20search_path%3Ds9%2Cpublic'),
    );
    try {
      assert.deepEqual((await fresh.run('select count(*) from late')).rows, [{ count: '0' }]);
    } finally {
      await fresh.end();
    }
  });
});

describe('DDL through the router: every session resolves names as Postgres does from then on', () => {
  for (const mode of ['pg-simple', 'pg-named'] as const)
    test(`a schema and a global table made by another client shadow sharded public.t (${mode})`, async () => {
      const schema = mode === 'pg-simple' ? 'late_a' : 'late_b';
      const steps = [
        `set search_path = ${schema}, public`,
        'select count(*)::int as n from t',
        'select tenant_id, v from t order by 1',
      ];
      const ddl = [
        `create schema ${schema}`,
        `create table ${schema}.t (tenant_id bigint, v text)`,
        `insert into ${schema}.t values (7, 'late')`,
      ];
      const [viaRouter, direct] = await Promise.all([
        openDriver(mode, routerUrl()),
        openDriver(mode, plainUrl()),
      ]);
      const [otherRouter, otherDirect] = await Promise.all([
        openDriver(mode, routerUrl()),
        openDriver(mode, plainUrl()),
      ]);
      try {
        // Both sessions logged in (and ran a statement) before the other client's DDL.
        for (const sql of steps) {
          const [g, w] = [await viaRouter.run(sql), await direct.run(sql)];
          assert.deepEqual(g.rows, w.rows, sql);
        }
        for (const sql of ddl) {
          const [g, w] = [await otherRouter.run(sql), await otherDirect.run(sql)];
          assert.equal(g.sqlstate, undefined, `${sql}: ${g.message}`);
          assert.equal(w.sqlstate, undefined, `${sql}: ${w.message}`);
        }
        for (const sql of steps) {
          const [g, w] = [await viaRouter.run(sql), await direct.run(sql)];
          assert.deepEqual(
            { rows: g.rows, sqlstate: g.sqlstate },
            { rows: w.rows, sqlstate: w.sqlstate },
            `${sql}: router ${JSON.stringify(shown(g))} vs Postgres ${JSON.stringify(shown(w))}`,
          );
        }
        assert.deepEqual((await viaRouter.run('select count(*)::int as n from t')).rows, [
          { n: 1 },
        ]);
      } finally {
        for (const d of [viaRouter, direct, otherRouter, otherDirect]) await d.end();
      }
    });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), 'condition not reached within 10 s');
}
