// SQL-level PREPARE / EXECUTE / DEALLOCATE, differential: two clients, A and B, run the same
// steps through the router (with --pool-size 1 and with the default pool) and against one plain
// Postgres, by node-postgres simple queries and by postgres.js (extended protocol): a key read,
// a read across nodes, an INSERT by key, an UPDATE on every node, Postgres's errors (duplicate,
// unknown, wrong arguments, a bad statement), inside and outside a transaction, DEALLOCATE and
// DISCARD ALL; B never sees A's statements. Rows, tags and SQLSTATEs must agree.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPostgres, type PgServer } from '@tessera/testkit';
import type { RunningRouter } from '../router.js';
import { startSecondRouter, startTestCluster, type TestCluster } from '../testing/cluster.js';
import { openDriver, setUpBoth, type DriverMode, type Outcome } from '../testing/drivers.js';
import { keysByNode } from '../testing/keys.js';

let c: TestCluster;
let plain: PgServer;
/** A second router on the same cluster with the default pool size. */
let wide: RunningRouter;

const SETUP = [
  'create table orders (tenant_id bigint not null, id int not null, v int not null)',
  `insert into orders (tenant_id, id, v) values ${Array.from({ length: 40 }, (_, i) => `(${i + 1}, ${i + 1}, 0)`).join(', ')}`,
];

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({ router: { poolSize: 1, acquireTimeoutMs: 3_000 } }),
    startPostgres({ name: 'sql-prepare-plain' }),
  ]);
  wide = await startSecondRouter(c);
  await setUpBoth(c.url(), plain, SETUP);
});
after(async () => {
  await wide?.stop();
  await c?.dispose();
  await plain?.dispose();
});

type Who = 'A' | 'B';

/** The steps; `n` is the tag of the run (each run writes its own keys). */
function steps(n: number): (readonly [Who, string])[] {
  const key = 1000 + n * 10;
  return [
    // Every run starts from the same rows (a failed run must not change what the next sees).
    ['A', 'update orders set v = 0 where id <= 40'],
    ['A', 'prepare k as select tenant_id, v from orders where tenant_id = $1'],
    ['A', 'execute k(7)'],
    ['A', "execute k('8')"],
    ['A', 'execute k(9.0)'],
    ['A', 'execute k(null)'],
    ['B', 'execute k(7)'],
    ['B', 'prepare k as select 2 as two'],
    ['B', 'execute k'],
    ['B', 'deallocate k'],
    ['A', 'execute k(7)'],
    ['A', 'prepare k as select 1'],
    ['A', 'execute nope(1)'],
    ['A', 'execute k(1, 2)'],
    ['A', 'execute k'],
    ['A', "execute k('abc')"],
    ['A', 'execute k(true)'],
    ['A', 'execute k(99999999999999999999)'],
    ['A', 'prepare bad as select * from no_such_table'],
    ['A', 'prepare bad2 as selec 1'],
    ['A', 'execute bad'],
    ['A', 'prepare c (int) as select count(*) as n, min(id) as lo from orders where id > $1'],
    ['A', 'execute c(30)'],
    [
      'A',
      'prepare o as select tenant_id from orders where id <= $1 order by tenant_id desc limit 3',
    ],
    ['A', 'execute o(20)'],
    ['A', 'prepare ins (bigint, int) as insert into orders (tenant_id, id, v) values ($1, $2, 0)'],
    ['A', `execute ins(${key}, ${key})`],
    ['A', `execute k(${key})`],
    ['A', 'prepare bump as update orders set v = v + 1 where id <= 40'],
    ['A', 'execute bump'],
    ['A', 'select sum(v)::int as s from orders where id <= 40'],
    ['A', 'begin'],
    ['A', 'execute k(7)'],
    ['A', `execute ins(${key + 1}, ${key + 1})`],
    ['A', 'prepare inx as select count(*)::int as n from orders where tenant_id = $1'],
    ['A', `execute inx(${key + 1})`],
    ['A', 'commit'],
    ['A', `execute inx(${key + 1})`],
    ['A', 'begin'],
    ['A', `execute ins(${key + 2}, ${key + 2})`],
    ['A', 'rollback'],
    ['A', `execute inx(${key + 2})`],
    ['A', 'begin'],
    ['A', 'execute k(true)'],
    ['A', 'execute k(7)'],
    ['A', 'rollback'],
    ['A', 'begin'],
    ['A', 'execute bump'],
    ['A', 'execute k(7)'],
    ['A', 'commit'],
    ['A', 'deallocate k'],
    ['A', 'execute k(7)'],
    ['A', 'deallocate k'],
    ['A', 'deallocate prepare c'],
    ['A', 'execute c(1)'],
    ['A', `execute inx(${key})`],
    ['A', 'deallocate all'],
    ['A', `execute inx(${key})`],
    ['A', 'prepare d as select 4 as four'],
    ['A', 'discard all'],
    ['A', 'execute d'],
    ['B', 'execute d'],
    ['B', 'execute inx(1)'],
  ];
}

/** What a client sees; the message is shown when outcomes differ, not compared (wording). */
const seen = (o: Outcome): object => ({ tag: o.tag, rows: o.rows, sqlstate: o.sqlstate });
const messages = new WeakMap<object, string>();

async function scenario(mode: DriverMode, url: string, n: number): Promise<object[]> {
  const a = await openDriver(mode, url);
  const b = await openDriver(mode, url);
  const out: object[] = [];
  try {
    for (const [who, sql] of steps(n)) {
      const o = await (who === 'A' ? a : b).run(sql);
      const step = { who, sql, ...seen(o) };
      if (o.message !== undefined) messages.set(step, o.message);
      out.push(step);
    }
  } finally {
    await a.end();
    await b.end();
  }
  return out;
}

function compare(viaRouter: object[], viaPlain: object[]): void {
  const lines: string[] = [];
  for (let i = 0; i < Math.max(viaRouter.length, viaPlain.length); i++) {
    const x = JSON.stringify(viaRouter[i]);
    const y = JSON.stringify(viaPlain[i]);
    const why = viaRouter[i] === undefined ? undefined : messages.get(viaRouter[i]!);
    if (x !== y) lines.push(`  router:   ${x} ${why ?? ''}\n  postgres: ${y}`);
  }
  assert.equal(lines.join('\n'), '', `the clients saw differently:\n${lines.join('\n')}`);
}

const plainUrl = (): string => `postgres://postgres@127.0.0.1:${plain.port}/postgres`;
const wideUrl = (): string => `postgres://postgres@127.0.0.1:${wide.port}/postgres`;

describe('SQL PREPARE / EXECUTE / DEALLOCATE as in Postgres', () => {
  let run = 0;
  for (const mode of ['pg-simple', 'postgres.js'] as const) {
    for (const pool of ['pool size 1', 'default pool'] as const) {
      test(`${mode}, ${pool}`, async () => {
        const n = ++run;
        const want = await scenario(mode, plainUrl(), n);
        const got = await scenario(mode, pool === 'pool size 1' ? c.url() : wideUrl(), n);
        compare(got, want);
      });
    }
  }

  for (const mode of ['pg-simple', 'postgres.js'] as const) {
    test(`${mode}: EXECUTE of a key read and an INSERT goes to the node owning the key`, async () => {
      const byNode = keysByNode(c.router, 'orders', 40);
      const s = await openDriver(mode, c.url());
      const port = "current_setting('port')::int";
      try {
        for (const sql of [
          `prepare w as select ${port} as port from orders where tenant_id = $1`,
          `prepare wi (bigint) as insert into orders (tenant_id, id, v) values ($1, -1, 0) returning ${port} as port`,
          'prepare wd as delete from orders where tenant_id = $1 and id = -1',
        ])
          assert.equal((await s.run(sql)).sqlstate, undefined, sql);
        for (const [node, keys] of byNode) {
          const want = [{ port: c.byName.get(node)!.port }];
          for (const k of keys.slice(0, 3)) {
            for (const sql of [`execute w(${k})`, `execute wi(${k})`, `execute w('${k}')`]) {
              const o = await s.run(sql);
              assert.deepEqual(o.rows?.slice(0, 1), want, `${sql} on ${node}: ${o.message}`);
            }
            assert.equal((await s.run(`execute wd(${k})`)).tag, 'DELETE');
          }
        }
      } finally {
        await s.end();
      }
    });
  }
});
