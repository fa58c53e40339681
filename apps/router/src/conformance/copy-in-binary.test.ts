// COPY FROM STDIN in binary format into sharded tables, against one plain Postgres: a stream
// Postgres itself wrote (COPY TO ... binary) loads the same rows, each on the node its key hashes
// to (bigint and uuid keys, NULLs, a header extension, chunks cut anywhere); malformed streams
// fail with Postgres's SQLSTATE, message and CONTEXT (the client's tuple number), and nothing lands.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hashKeyText } from '@tessera/pg-hash';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { setUpBoth } from '../testing/drivers.js';
import { rawCopy, type CopyAnswer } from '../testing/copy.js';

let c: TestCluster;
let plain: PgServer;

const SETUP = [
  'create table orders (tenant_id bigint not null, id int not null, note text, total numeric)',
  'create table profiles (id uuid not null, name text, born date)',
  // The source of the streams: rows Postgres writes in binary (only on plain Postgres).
];
const SOURCE = [
  'create table src_orders (tenant_id bigint not null, id int not null, note text, total numeric)',
  `insert into src_orders select g, g % 7, case when g % 5 = 0 then null else 'n\t' || g end, g * 1.5 from generate_series(1, 400) g`,
  'create table src_profiles (id uuid not null, name text, born date)',
  `insert into src_profiles select md5(g::text)::uuid, 'p' || g, date '2000-01-01' + g from generate_series(1, 200) g`,
];

let ordersBinary: Buffer;
let profilesBinary: Buffer;

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster(),
    startPostgres({ name: 'copy-in-binary-plain' }),
  ]);
  await setUpBoth(c.url(), plain, SETUP);
  for (const sql of SOURCE) await plain.query(sql);
  ordersBinary = Buffer.concat(
    (await rawCopy(plain.port, 'copy src_orders to stdout (format binary)')).data,
  );
  profilesBinary = Buffer.concat(
    (await rawCopy(plain.port, 'copy src_profiles to stdout (format binary)')).data,
  );
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const both = async (sql: string, chunks: readonly Buffer[]): Promise<[CopyAnswer, CopyAnswer]> => [
  await rawCopy(plain.port, sql, chunks),
  await rawCopy(c.router.port, sql, chunks),
];

/** Cuts `data` into pieces of `size` bytes (CopyData boundaries anywhere in a tuple). */
const pieces = (data: Buffer, size: number): Buffer[] => {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) out.push(data.subarray(i, i + size));
  return out;
};

async function rows(
  server: { query(sql: string): Promise<unknown[]> },
  sql: string,
): Promise<string> {
  return JSON.stringify(await server.query(sql));
}

async function truncate(): Promise<void> {
  for (const sql of ['truncate orders', 'truncate profiles']) {
    await plain.query(sql);
    const r = await rawCopy(c.router.port, sql);
    assert.equal(r.error, undefined);
  }
}

describe('COPY FROM STDIN (FORMAT binary) into sharded tables', () => {
  test('a bigint-keyed stream loads the same rows, each on its owner, in any CopyData cut', async () => {
    for (const size of [ordersBinary.length, 7, 4096]) {
      await truncate();
      const sql = 'copy orders from stdin (format binary)';
      const [p, r] = await both(sql, pieces(ordersBinary, size));
      assert.deepEqual(r, p, `CopyData of ${size} bytes`);
      assert.equal(r.tag, 'COPY 400');
      assert.deepEqual(r.response, { format: 1, columns: [1, 1, 1, 1] });
      const q = 'select * from orders order by tenant_id';
      assert.equal(
        await rows({ query: (s) => queryRouter(s) }, q),
        await rows(plain, q),
        `CopyData of ${size} bytes`,
      );
    }
    await everyRowOnItsOwner('orders', 'tenant_id');
  });

  test('a uuid-keyed stream with a column list, and a header extension Postgres skips', async () => {
    await truncate();
    // The flags word is followed by an extension length: 4 bytes of extension the reader skips.
    const extended = Buffer.concat([
      profilesBinary.subarray(0, 15),
      Buffer.from([0, 0, 0, 4, 1, 2, 3, 4]),
      profilesBinary.subarray(19),
    ]);
    const sql = 'copy profiles (id, name, born) from stdin with (format binary)';
    const [p, r] = await both(sql, pieces(extended, 1000));
    assert.deepEqual(r, p);
    assert.equal(r.tag, 'COPY 200');
    const q = 'select * from profiles order by id';
    assert.equal(await rows({ query: (s) => queryRouter(s) }, q), await rows(plain, q));
    await everyRowOnItsOwner('profiles', 'id');
  });

  test('malformed streams fail as Postgres fails them, and nothing lands', async () => {
    await truncate();
    const sql = 'copy orders from stdin (format binary)';
    const header = ordersBinary.subarray(0, 19);
    const body = ordersBinary.subarray(19, ordersBinary.length - 2);
    const tuples = splitTuples(body);
    const cases: Record<string, Buffer> = {
      'no signature': Buffer.from('PGCOPY\nnot binary at all'),
      'a header cut short': ordersBinary.subarray(0, 13),
      'critical flags': Buffer.concat([
        ordersBinary.subarray(0, 11),
        Buffer.from([0, 1, 0, 0]),
        ordersBinary.subarray(15),
      ]),
      'a tuple with three fields (the 37th)': Buffer.concat([
        header,
        ...tuples.slice(0, 36),
        Buffer.from([0, 3]),
        tuples[36]!.subarray(2),
      ]),
      'a key field of 7 bytes (the 50th tuple)': Buffer.concat([
        header,
        ...tuples.slice(0, 49),
        Buffer.from([0, 4, 0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7]),
        tuples[49]!.subarray(2 + 4 + 8),
        ...tuples.slice(50),
      ]),
      'a bad total in the 120th tuple': Buffer.concat([
        header,
        ...tuples.slice(0, 119),
        corruptLastField(tuples[119]!),
        ...tuples.slice(120),
      ]),
      'a negative field length': Buffer.concat([
        header,
        ...tuples.slice(0, 3),
        Buffer.from([0, 4, 0xff, 0xff, 0xff, 0xf0]),
      ]),
      'a stream cut inside a tuple': Buffer.concat([
        header,
        ...tuples.slice(0, 20),
        tuples[20]!.subarray(0, 9),
      ]),
      'data after the trailer': Buffer.concat([
        header,
        ...tuples.slice(0, 5),
        Buffer.from([0xff, 0xff, 0]),
      ]),
    };
    for (const [name, data] of Object.entries(cases)) {
      const [p, r] = await both(sql, [data]);
      assert.ok(p.error !== undefined, `${name}: plain Postgres fails it`);
      assert.deepEqual(r.error, p.error, name);
      assert.equal(r.tag, undefined, name);
    }
    assert.equal(
      await queryRouter('select count(*)::int as n from orders').then((x) => x[0]?.['n']),
      0,
    );
    // A stream that simply ends after whole tuples, without the trailer, is accepted.
    const [p, r] = await both(sql, [Buffer.concat([header, ...tuples.slice(0, 10)])]);
    assert.equal(p.tag, 'COPY 10');
    assert.deepEqual(r, p);
  });
});

/** The tuples of a binary stream's body (header and trailer taken off). */
function splitTuples(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let i = 0;
  while (i < body.length) {
    const start = i;
    const n = body.readInt16BE(i);
    i += 2;
    for (let f = 0; f < n; f++) i += 4 + Math.max(body.readInt32BE(i), 0);
    out.push(body.subarray(start, i));
  }
  return out;
}

/** The tuple with its last field (a numeric) replaced by bytes numeric_recv refuses. */
function corruptLastField(tuple: Buffer): Buffer {
  let i = 2;
  const fields: Buffer[] = [];
  while (i < tuple.length) {
    const len = tuple.readInt32BE(i);
    fields.push(tuple.subarray(i, i + 4 + Math.max(len, 0)));
    i += 4 + Math.max(len, 0);
  }
  const bad = Buffer.from([0, 0, 0, 8, 0, 1, 0, 0, 0x77, 0x77, 0, 0]);
  return Buffer.concat([tuple.subarray(0, 2), ...fields.slice(0, -1), bad]);
}

async function queryRouter(sql: string): Promise<Record<string, unknown>[]> {
  const { default: pg } = await import('pg');
  const cl = new pg.Client({ connectionString: c.url() });
  await cl.connect();
  try {
    return (await cl.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await cl.end();
  }
}

/** Every row of `table` on every node hashes to that node, read from the nodes themselves. */
async function everyRowOnItsOwner(table: string, key: string): Promise<void> {
  const view = c.router.catalog()?.table('public', table);
  if (view?.kind !== 'sharded') throw new Error(`${table} is not sharded`);
  const ks = view.keyspace;
  let total = 0;
  for (const [node, server] of c.byName) {
    const keys = await server.query<{ k: string }>(`select ${key}::text as k from ${table}`);
    total += keys.length;
    for (const { k } of keys)
      assert.equal(ks.ownerOf(hashKeyText(ks.keyType, k, ks.seed)), node, `${table} key ${k}`);
  }
  assert.ok(total > 0);
}
