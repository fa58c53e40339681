// psql and postgres.js through the router: the sample flows (DDL, one-tenant reads and writes,
// reference joins, global tables, transactions, COPY) with each real client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

const run = promisify(execFile);
const PSQL = '/usr/lib/postgresql/15/bin/psql';
let c: TestCluster;

async function psql(sql: string, extra: string[] = []): Promise<string> {
  const { stdout } = await run(
    PSQL,
    [
      '-X',
      '-A',
      '-t',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      '127.0.0.1',
      '-p',
      String(c.router.port),
      '-U',
      'postgres',
      '-d',
      'postgres',
      ...extra,
      '-c',
      sql,
    ],
    {
      env: { ...process.env, PGCONNECT_TIMEOUT: '5', PGSSLMODE: 'prefer' },
    },
  );
  return stdout.trim();
}

before(async () => {
  c = await startTestCluster();
});
after(async () => {
  await c?.dispose();
});

describe('psql through the router', () => {
  test('DDL, writes, reads, joins, global tables', async () => {
    await psql(
      'create table orders (tenant_id bigint not null, id bigint not null, total int, country text, primary key (tenant_id, id))',
    );
    await psql('create table countries (code text primary key, name text)');
    await psql('create table notes (id serial primary key, body text)');
    await psql("insert into countries values ('fr', 'France'), ('it', 'Italy')");
    await psql(
      "insert into orders values (1, 1, 10, 'fr'), (2, 1, 20, 'it'), (3, 1, 30, 'fr'), (4, 1, 40, 'it')".replace(
        'insert into orders',
        'insert into orders (tenant_id, id, total, country)',
      ),
    );
    assert.equal(await psql('select total from orders where tenant_id = 3'), '30');
    assert.equal(
      await psql(
        'select c.name from orders o join countries c on c.code = o.country where o.tenant_id = 2',
      ),
      'Italy',
    );
    await psql("insert into notes (body) values ('hello')");
    assert.equal(await psql('select body from notes'), 'hello');
    assert.match(
      await psql('begin; update orders set total = 31 where tenant_id = 3; commit'),
      /COMMIT/,
    );
    assert.equal(await psql('select total from orders where tenant_id = 3'), '31');
    assert.match(await psql('select version()'), /PostgreSQL 15/);
  });

  test('psql \\copy into a sharded table and a refusal', async () => {
    const { stdout } = await run(
      PSQL,
      [
        '-X',
        '-h',
        '127.0.0.1',
        '-p',
        String(c.router.port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-c',
        '\\copy orders (tenant_id, id, total) from program \'seq 100 199 | sed -e "s/.*/&\\t2\\t5/"\'',
      ],
      {
        env: { ...process.env, PGCONNECT_TIMEOUT: '5' },
      },
    );
    assert.match(stdout, /COPY 100/);
    let total = 0;
    for (const s of c.data)
      total += Number(
        (await s.query<{ n: string }>('select count(*) n from orders where id = 2'))[0]!.n,
      );
    assert.equal(total, 100);
    await assert.rejects(
      psql('select id, rank() over (order by id) from orders'),
      /window functions/,
    );
  });
});

describe('postgres.js through the router', () => {
  test('queries, transactions, prepared statements', async () => {
    const sql = postgres(c.url(), { max: 4, connect_timeout: 5, onnotice: () => undefined });
    try {
      await sql`create table if not exists order_items (tenant_id bigint not null, id bigint not null, total int, primary key (tenant_id, id))`;
      for (let t = 10; t < 30; t++)
        await sql`insert into order_items (tenant_id, id, total) values (${t}, 1, ${t})`;
      const [row] = await sql`select total from order_items where tenant_id = ${12}`;
      assert.equal(row?.total, 12);
      await sql.begin(async (tx) => {
        await tx`update order_items set total = 0 where tenant_id = ${13}`;
        await tx`insert into order_items (tenant_id, id, total) values (${13}, 2, 5)`;
      });
      const rows = await sql`select id, total from order_items where tenant_id = ${13} order by id`;
      assert.deepEqual(
        rows.map((r) => [String(r.id), r.total]),
        [
          ['1', 0],
          ['2', 5],
        ],
      );
      const names =
        await sql`select o.total, c.name from orders o left join countries c on c.code = o.country where o.tenant_id = ${1}`;
      assert.equal(names[0]?.name, 'France');
      // A read across nodes through postgres.js (Describe, then Bind/Execute), and a refused one.
      const spread = await sql`select count(*) as n from order_items where total > ${1}`;
      assert.ok(Number(spread[0]?.n) > 0);
      await assert.rejects(
        sql`select tenant_id, row_number() over () from order_items where total > ${1}`,
        /window functions/,
      );
      const [{ n }] = (await sql`select count(*)::int as n from notes`) as unknown as [
        { n: number },
      ];
      assert.equal(n, 1);
    } finally {
      await sql.end();
    }
  });
});
