// The refusals README.md and docs/architecture.md promise, checked against the behaviour: every
// statement below is one those documents name as refused. Through the router it must fail with
// 0A000 and a message that says why; the same steps on one plain Postgres must succeed (a refusal
// of something Postgres itself rejects would prove nothing). The steps before the last one set
// up session state and must succeed on both sides. When a refusal is lifted, its case moves out of
// this file and the documents change with it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { openDriver, setUpBoth, type DriverMode } from '../testing/drivers.js';

let c: TestCluster;
let plain: PgServer;

const SETUP = [
  'create table orders (tenant_id bigint not null, id int not null, qty int, primary key (tenant_id, id))',
  'create table order_items (tenant_id bigint not null, id int not null, qty int, n bigserial)',
  'create table countries (code text primary key, name text)',
  'create table settings (k text primary key, v int)',
  'create table profiles (id uuid primary key, email text)',
  `insert into orders (tenant_id, id, qty) values ${Array.from({ length: 24 }, (_, i) => `(${i + 1}, ${i}, ${i % 5})`).join(', ')}`,
  `insert into order_items (tenant_id, id, qty) values ${Array.from({ length: 24 }, (_, i) => `(${i + 1}, ${i}, ${i % 3})`).join(', ')}`,
  "insert into countries values ('nl', 'Netherlands'), ('fr', 'France')",
  "insert into settings values ('a', 1)",
  'create view busy_orders as select * from orders where qty > 1',
];

/** Each case: where the documents name it, then its steps; the last step is the refused one. */
const CASES: Record<string, { readonly doc: string; readonly steps: readonly string[] }> = {
  'a window function across nodes': {
    doc: 'README',
    steps: ['select tenant_id, row_number() over (order by tenant_id) from orders'],
  },
  'INTERSECT across nodes': {
    doc: 'README, architecture.md',
    steps: ['select tenant_id from orders intersect select tenant_id from order_items'],
  },
  'EXCEPT across nodes': {
    doc: 'README, architecture.md',
    steps: ['select tenant_id from orders except select tenant_id from order_items'],
  },
  'a subquery over a sharded table in WHERE across nodes': {
    doc: 'README, architecture.md',
    steps: [
      'select id from orders where tenant_id in (select tenant_id from order_items where qty > 1)',
    ],
  },
  'a SERIALIZABLE transaction across nodes': {
    doc: 'README, architecture.md',
    steps: ['begin isolation level serializable', 'select count(*) from orders'],
  },
  'a unique index on a sharded table without its key column': {
    doc: 'README, architecture.md',
    steps: ['create unique index if not exists profiles_email on profiles (email)'],
  },
  'a UNIQUE constraint added to a sharded table without its key column': {
    doc: 'README, architecture.md',
    steps: ['alter table profiles add unique (email)'],
  },
  'an UPDATE of the shard key': {
    doc: 'README',
    steps: ['update orders set tenant_id = 1000 where tenant_id = 1'],
  },
  'WITH RECURSIVE over a sharded table': {
    doc: 'architecture.md',
    steps: [
      'with recursive r(n) as (select min(qty) from orders union all select n + 1 from r where n < 3) select n from r',
    ],
  },
  'LATERAL across nodes': {
    doc: 'architecture.md',
    steps: [
      'select o.id, x.n from orders o, lateral (select count(*) as n from order_items i where i.qty = o.qty) x',
    ],
  },
  'statement_timestamp() across nodes': {
    doc: 'architecture.md',
    steps: ['select count(*), statement_timestamp() from orders'],
  },
  'a temp table joined with a sharded table on a data node': {
    doc: 'architecture.md',
    steps: [
      'create temp table picks (t bigint)',
      'insert into picks values (1), (2)',
      'select o.id from orders o join picks p on p.t = o.tenant_id',
    ],
  },
  'a temporary table named like a sharded table': {
    doc: 'architecture.md',
    steps: ['create temp table orders (x int)'],
  },
  'a temporary view named like a reference table': {
    doc: 'architecture.md',
    steps: ['create temp view countries as select 1 as x'],
  },
  'an advisory lock in a read across nodes': {
    doc: 'architecture.md',
    steps: ['select pg_try_advisory_lock(id) from orders'],
  },
  'LOCK naming a global table together with a sharded one': {
    doc: 'architecture.md',
    steps: ['begin', 'lock table settings, orders'],
  },
  'EXPLAIN EXECUTE': {
    doc: 'architecture.md',
    steps: ['prepare p1 as select id from orders where tenant_id = $1', 'explain execute p1(1)'],
  },
  'EXECUTE with an argument that is not a constant': {
    doc: 'architecture.md',
    steps: ['prepare p2 as select id from orders where tenant_id = $1', 'execute p2(1 + 1)'],
  },
  'setval() of a sequence the router hands out': {
    doc: 'README, architecture.md',
    steps: ["select setval('order_items_n_seq', 100)"],
  },
  'INSERT ... SELECT leaving a serial column to the node': {
    doc: 'README, architecture.md',
    steps: [
      'insert into order_items (tenant_id, id, qty) select tenant_id, id + 100, qty from orders',
    ],
  },
  "a read of pg_prepared_statements (it would show a pooled backend's, not the session's)": {
    doc: 'architecture.md',
    steps: ['prepare p4 as select 1', 'select name from pg_prepared_statements'],
  },
  'a write through a view over sharded tables': {
    doc: 'README, architecture.md',
    steps: ['update busy_orders set qty = 9 where tenant_id = 3'],
  },
  'a view reading both sharded and global tables': {
    doc: 'README',
    steps: [
      'create or replace view mixed_orders as select o.id from orders o join settings s on s.v = o.qty',
    ],
  },
  'PREPARE in a multi-statement query': {
    doc: 'architecture.md',
    steps: ['prepare p3 as select 1; select 2'],
  },
};

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster(),
    startPostgres({ name: 'documented-refusals-plain' }),
  ]);
  const p = await plain.connect();
  try {
    await setUpBoth(c.url(), p, SETUP);
  } finally {
    await p.end();
  }
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const MODES: readonly DriverMode[] = ['pg-simple', 'postgres.js'];

describe('what README.md and architecture.md say is refused is refused (0A000), and Postgres answers it', () => {
  for (const [name, { doc, steps }] of Object.entries(CASES))
    for (const mode of MODES) {
      // postgres.js sends each statement as one extended Parse: a multi-statement query is not one.
      if (mode === 'postgres.js' && steps.some((s) => s.includes('; '))) continue;
      test(`${name} (${doc}; ${mode})`, async () => {
        const viaRouter = await openDriver(mode, c.url());
        const direct = await openDriver(mode, plain.url());
        try {
          for (const [i, sql] of steps.entries()) {
            const p = await direct.run(sql);
            assert.equal(p.sqlstate, undefined, `plain Postgres: ${sql}: ${p.message}`);
            const r = await viaRouter.run(sql);
            if (i < steps.length - 1) {
              assert.equal(r.sqlstate, undefined, `router, set-up step: ${sql}: ${r.message}`);
              continue;
            }
            assert.equal(r.sqlstate, '0A000', `router: ${sql}: ${r.sqlstate} ${r.message ?? ''}`);
            assert.ok((r.message ?? '').length > 15, `the refusal says why: ${r.message}`);
          }
        } finally {
          await viaRouter.end();
          await direct.end();
        }
      });
    }
});
