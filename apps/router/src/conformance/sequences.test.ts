// Cluster-wide sequences and volatile key defaults (issue 14 item 2), and INSERT without a column
// list (issue 15), differential: the same statements through the router and against one plain
// Postgres. Serial/identity/uuid values differ between the two by nature (the router's come from
// blocks, with gaps), so rows are compared without them, and the values themselves are checked
// for what Postgres promises: unique, returned as stored, found again by key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { DEFAULT_KEYSPACES, startTestCluster, type TestCluster } from '../testing/cluster.js';
import { viaNodePg, viaPostgresJs, viaPsycopg, type Seen } from './sequences-drivers.js';
import { skipWithoutPython } from '../testing/python.js';

const SCHEMA = [
  // A non-key serial column (the key is acct_id).
  'create table accts (id bigserial, acct_id bigint not null, v text, primary key (acct_id, id))',
  // Serial, identity and uuid-default keys.
  'create table items (id bigserial primary key, v text)',
  'create table idents (id bigint generated always as identity primary key, v text)',
  'create table uuids (id uuid primary key default gen_random_uuid(), v text)',
  'create table plainkv (k bigint primary key, a text, b int default 7)',
  'create table refs (id serial primary key, v text)',
];

let c: TestCluster;
let plain: PgServer;

before(async () => {
  c = await startTestCluster({
    keyspaces: DEFAULT_KEYSPACES,
    tables: [
      { name: 'accts', kind: 'sharded', keyspace: 'tenants', keyColumn: 'acct_id' },
      { name: 'items', kind: 'sharded', keyspace: 'tenants', keyColumn: 'id' },
      { name: 'idents', kind: 'sharded', keyspace: 'tenants', keyColumn: 'id' },
      { name: 'uuids', kind: 'sharded', keyspace: 'users', keyColumn: 'id' },
      { name: 'plainkv', kind: 'sharded', keyspace: 'tenants', keyColumn: 'k' },
      { name: 'refs', kind: 'reference' },
    ],
  });
  plain = await startPostgres({ name: 'seq-plain' });
  for (const url of [c.url(), plain.url()]) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    for (const sql of SCHEMA) await client.query(sql);
    await client.end();
  }
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Rows of `table` on every node of the cluster, read directly (not through the router). */
async function onNodes(table: string, cols: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const [node, server] of c.byName) {
    const client = new pg.Client({ connectionString: server.url() });
    await client.connect();
    const r = await client.query(`select ${cols} from ${table}`);
    await client.end();
    out.push(...r.rows.map((row: Record<string, unknown>) => ({ ...row, node })));
  }
  return out;
}

function assertUnique(values: readonly unknown[], what: string): void {
  const seen = new Set(values.map(String));
  assert.equal(seen.size, values.length, `${what}: ${values.length - seen.size} duplicates`);
}

describe('cluster-wide serial values', () => {
  test('a non-key bigserial is unique across nodes, and RETURNING gives what was stored', async () => {
    const got = await withClient(c.url(), async (client) => {
      const ids: string[] = [];
      for (let acct = 1; acct <= 40; acct++) {
        const r = await client.query<{ id: string }>(
          `insert into accts (acct_id, v) values (${acct}, 'a${acct}') returning id`,
        );
        ids.push(r.rows[0]!.id);
      }
      return ids;
    });
    assertUnique(got, 'ids returned');
    const stored = await onNodes('accts', 'id::text, acct_id::text, v');
    assertUnique(
      stored.map((r) => r['id']),
      'ids stored',
    );
    for (let acct = 1; acct <= 40; acct++) {
      const row = stored.find((r) => r['v'] === `a${acct}`);
      assert.equal(row?.['id'], got[acct - 1], `row of account ${acct}`);
    }
    // As on plain Postgres: as many rows, ids ascending in insertion order.
    assert.deepEqual(
      got.map(BigInt),
      [...got.map(BigInt)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
    );
  });

  test('a reference table serial gives every node the same, cluster-unique value', async () => {
    const ids = await withClient(c.url(), async (client) => {
      const out: string[] = [];
      for (let i = 0; i < 5; i++)
        out.push(
          (
            await client.query<{ id: number }>(`insert into refs (v) values ('r${i}') returning id`)
          ).rows[0]!.id.toString(),
        );
      return out;
    });
    assertUnique(ids, 'reference ids');
    const stored = await onNodes('refs', 'id::text, v');
    for (const node of c.byName.keys()) {
      const rows = stored.filter((r) => r['node'] === node);
      assert.deepEqual(
        rows.map((r) => `${String(r['id'])}:${String(r['v'])}`).sort(),
        ids.map((id, i) => `${id}:r${i}`).sort(),
        `node ${node}`,
      );
    }
  });

  test('after a router restart no value is given again', async () => {
    const take = (tag: string): Promise<string[]> =>
      withClient(c.url(), async (client) => {
        const out: string[] = [];
        for (let acct = 100; acct < 110; acct++)
          out.push(
            (
              await client.query<{ id: string }>(
                `insert into accts (acct_id, v) values (${acct}, '${tag}') returning id`,
              )
            ).rows[0]!.id,
          );
        return out;
      });
    const before = await take('before-restart');
    await c.restartRouter();
    const after = await take('after-restart');
    assertUnique([...before, ...after], 'ids across a router restart');
    assertUnique(
      (await onNodes('accts', 'id::text')).map((r) => r['id']),
      'every stored id',
    );
  });
});

describe('serial, identity and uuid keys through three drivers', () => {
  const drivers: [string, (url: string) => Promise<Seen>, string | false][] = [
    ['node-postgres', (url) => viaNodePg(url, 'np'), false],
    ['postgres.js', viaPostgresJs, false],
    ['psycopg 3', viaPsycopg, skipWithoutPython('psycopg', 'python3-psycopg')],
  ];
  for (const [name, drive, skip] of drivers) {
    test(
      `${name}: each row is found again by the key it returned, as on Postgres`,
      { skip },
      async () => {
        const [routed, direct] = await Promise.all([drive(c.url()), drive(plain.url())]);
        assert.deepEqual(routed.rows, direct.rows);
        assert.deepEqual(routed.found, direct.found);
        // Every value found by its own key: one row each, the one just inserted.
        assert.deepEqual(
          routed.found,
          routed.rows.slice(0, routed.found.length).map((r) => [r[0]]),
        );
        assertUnique(routed.keys, `${name} keys`);
      },
    );
  }
});

describe('many clients at once', () => {
  test('10,000 rows from 8 concurrent clients over 3 nodes: no duplicate, RETURNING as stored', async () => {
    const CLIENTS = 8;
    const PER_CLIENT = 1250;
    const returned = new Map<string, string>();
    await Promise.all(
      Array.from({ length: CLIENTS }, (_, cl) =>
        withClient(c.url(), async (client) => {
          let i = 0;
          // Half as prepared single-row INSERTs (extended protocol), half as 25-row simple ones.
          for (; i < PER_CLIENT / 2; i++) {
            const v = `m${cl}-${i}`;
            const r = await client.query<{ id: string; v: string }>({
              name: 'many-one',
              text: 'insert into accts (acct_id, v) values ($1, $2) returning id, v',
              values: [1000 + ((cl * 7919 + i * 104729) % 5000), v],
            });
            returned.set(r.rows[0]!.v, r.rows[0]!.id);
          }
          while (i < PER_CLIENT) {
            // One account per statement: RETURNING over several nodes is another matter.
            const acct = 1000 + ((cl * 31 + i * 17) % 5000);
            const rows: string[] = [];
            for (let k = 0; k < 25 && i < PER_CLIENT; k++, i++)
              rows.push(`(${acct}, 'm${cl}-${i}')`);
            const r = await client.query<{ id: string; v: string }>(
              `insert into accts (acct_id, v) values ${rows.join(', ')} returning id, v`,
            );
            for (const row of r.rows) returned.set(row.v, row.id);
          }
        }),
      ),
    );
    assert.equal(returned.size, CLIENTS * PER_CLIENT);
    assertUnique([...returned.values()], 'returned ids');
    const stored = (await onNodes('accts', 'id::text, v')).filter((r) =>
      String(r['v']).startsWith('m'),
    );
    assert.equal(stored.length, CLIENTS * PER_CLIENT);
    assertUnique(
      stored.map((r) => r['id']),
      'stored ids',
    );
    for (const r of stored) assert.equal(returned.get(String(r['v'])), r['id'], String(r['v']));
  });
});

/** Each statement on both sides, with rows and SQLSTATE compared. */
async function sameOnBoth(statements: readonly string[]): Promise<void> {
  const outcomes = await Promise.all(
    [c.url(), plain.url()].map((url) =>
      withClient(url, async (client) => {
        const out: unknown[] = [];
        for (const sql of statements) {
          try {
            const r = await client.query(sql);
            out.push({ sql, tag: r.command, rows: r.rows });
          } catch (e) {
            out.push({ sql, sqlstate: (e as { code?: string }).code });
          }
        }
        return out;
      }),
    ),
  );
  assert.deepEqual(outcomes[0], outcomes[1]);
}

describe('INSERT without a column list', () => {
  test('takes the table column order, as Postgres does', async () => {
    await sameOnBoth([
      "insert into plainkv values (1, 'a'), (2, 'b', 3)",
      'insert into plainkv values (3)',
      "insert into plainkv values (4, 'd', default) returning *",
      'insert into plainkv values (5, $$e$$, 5, 6)',
      'select * from plainkv order by k',
      // A serial column in first place: DEFAULT there is the router's value.
      "insert into accts values (default, 9001, 'nolist') returning acct_id, v",
      "insert into items values (default, 'nolist-item') returning v",
      "select v from items where v = 'nolist-item'",
      'select acct_id, v from accts where acct_id = 9001',
    ]);
  });

  test('identity and DEFAULT rules: what Postgres refuses is refused alike', async () => {
    await sameOnBoth([
      "insert into idents (id, v) values (5, 'explicit')",
      "insert into idents (id, v) values (default, 'default-kw') returning v",
      "insert into idents (id, v) overriding system value values (999999, 'overridden') returning id, v",
      "insert into items (id, v) values (default, 'd1'), (default, 'd2') returning v",
    ]);
  });
});

describe('currval, lastval and nextval in a session', () => {
  /** What a client sees; values are checked against each other, not across the two sides. */
  async function session(url: string): Promise<unknown[]> {
    return withClient(url, async (client) => {
      const out: unknown[] = [];
      const q = async (sql: string, values?: unknown[]): Promise<Record<string, unknown>[]> => {
        try {
          const r = await client.query(sql, values);
          out.push({ sql, fields: r.fields.map((f) => `${f.name}:${f.dataTypeID}`) });
          return r.rows as Record<string, unknown>[];
        } catch (e) {
          out.push({ sql, sqlstate: (e as { code?: string }).code });
          return [];
        }
      };
      await q("select currval('items_id_seq')");
      await q('select lastval()');
      const [ins] = await q("insert into items (v) values ('cv') returning id");
      const [cur] = await q("select currval('items_id_seq') as c");
      out.push({ currvalIsInserted: String(cur?.['c']) === String(ins?.['id']) });
      const [next] = await q("select nextval('items_id_seq')");
      const [both] = await q("select currval('items_id_seq'), lastval()");
      out.push({
        nextAbove: BigInt(String(next?.['nextval'])) > BigInt(String(ins?.['id'])),
        currvalIsNext: String(both?.['currval']) === String(next?.['nextval']),
        lastvalIsNext: String(both?.['lastval']) === String(next?.['nextval']),
      });
      // Prepared (extended protocol) too.
      const [p] = await q('select nextval($1)', ['items_id_seq']);
      out.push({ preparedIsNumber: /^\d+$/.test(String(p?.['nextval'])) });
      const [row] = await q('select v from items where id = $1', [next?.['nextval']]);
      out.push({ nextvalIsFree: row === undefined });
      return out;
    });
  }

  test('behave for the session as in Postgres', async () => {
    const [routed, direct] = await Promise.all([session(c.url()), session(plain.url())]);
    assert.deepEqual(routed, direct);
  });

  test('nextval of the router and a later INSERT never give the same value', async () => {
    const values = await withClient(c.url(), async (client) => {
      const out: string[] = [];
      for (let i = 0; i < 20; i++) {
        out.push(
          String((await client.query("select nextval('accts_id_seq') as n")).rows[0].n),
          String((await client.query('select nextval($1) as n', ['accts_id_seq'])).rows[0].n),
          String(
            (await client.query(`insert into accts (acct_id, v) values (${i}, 'nx') returning id`))
              .rows[0].id,
          ),
        );
      }
      return out;
    });
    assertUnique(values, 'nextval and inserted ids');
  });
});
