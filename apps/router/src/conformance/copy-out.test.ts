// COPY ... TO STDOUT of rows on several nodes, against one plain Postgres holding the same rows:
// the CopyOutResponse, every row once in COPY's own bytes (text and CSV escaping, NULL strings,
// FORCE_QUOTE, headers, binary tuples under one header and trailer, merged rows in binary too),
// the `COPY n` tag and the errors (SQLSTATE, message, position). A table's rows come in heap
// order, so they are compared as sorted lines (binary: sorted tuples); a query with ORDER BY is
// compared byte for byte.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { setUpBoth } from '../testing/drivers.js';
import { rawCopy, sortedLines, type CopyAnswer } from '../testing/copy.js';

let c: TestCluster;
let plain: PgServer;

/** Values COPY must escape or quote, in the note column. */
const NOTES = [
  'plain',
  'tab\there',
  'new\nline',
  'cr\rhere',
  'back\\slash',
  'comma, "quoted"',
  '\\.',
  '',
  '\\N',
  'NULL',
  'ünïcødé ✓',
  '\b\f\v\x01',
  'pipe|bar',
];

/** An E'' literal of `text`. */
const literal = (text: string): string =>
  `E'${[...text].map((ch) => (ch === "'" ? "''" : ch === '\\' ? '\\\\' : ch < ' ' ? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}` : ch)).join('')}'`;

/** Row `g` of orders: notes cycle through NOTES, every 9th is NULL. */
const orderRow = (g: number): string =>
  `(${g}, ${g % 7}, ${g % 9 === 0 ? 'null' : literal(NOTES[g % NOTES.length]!)}, ${g * 1.25}, date '2024-01-01' + ${g})`;

const SETUP = [
  'create table orders (tenant_id bigint not null, id int not null, note text, total numeric, made date)',
  'create table countries (code text primary key, name text)',
  "insert into countries values ('nl', 'Netherlands'), ('fr', 'France, \"la\"'), ('xx', null)",
  `insert into orders values ${Array.from({ length: 300 }, (_, i) => orderRow(i + 1)).join(', ')}`,
];

before(async () => {
  [c, plain] = await Promise.all([startTestCluster(), startPostgres({ name: 'copy-out-plain' })]);
  await setUpBoth(c.url(), plain, SETUP);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

const both = async (sql: string): Promise<[CopyAnswer, CopyAnswer]> => [
  await rawCopy(plain.port, sql),
  await rawCopy(c.router.port, sql),
];

/** Tuples of a binary COPY stream, sorted, with its header and trailer. */
function binaryParts(data: readonly Buffer[]): {
  header: string;
  tuples: string[];
  trailer: string;
} {
  const all = Buffer.concat(data);
  const tuples: string[] = [];
  let i = 19;
  while (all.readInt16BE(i) !== -1) {
    const start = i;
    const n = all.readInt16BE(i);
    i += 2;
    for (let f = 0; f < n; f++) i += 4 + Math.max(all.readInt32BE(i), 0);
    tuples.push(all.subarray(start, i).toString('hex'));
  }
  return {
    header: all.subarray(0, 19).toString('hex'),
    tuples: tuples.sort(),
    trailer: all.subarray(i).toString('hex'),
  };
}

describe('COPY of a sharded table TO STDOUT', () => {
  for (const sql of [
    'copy orders to stdout',
    "copy orders (note, tenant_id) to stdout with (delimiter '|', null 'NULL')",
    'copy orders to stdout with (format csv)',
    "copy public.orders (id, note, total) to stdout (format csv, header, force_quote (note), null 'N/A')",
    "copy orders (note) to stdout with csv quote '''' escape '\\' force quote *",
  ])
    test(sql, async () => {
      const [p, r] = await both(sql);
      assert.equal(p.error, undefined);
      assert.deepEqual(r.response, p.response);
      assert.equal(r.tag, p.tag);
      assert.equal(r.tag, 'COPY 300');
      assert.deepEqual(sortedLines(r.data), sortedLines(p.data));
      // One CopyData per row, a header line first when asked for.
      assert.equal(r.data.length, p.data.length);
      assert.deepEqual(
        r.data[0]?.toString().startsWith('id,'),
        p.data[0]?.toString().startsWith('id,'),
      );
    });

  test('in binary format: one header, every tuple, one trailer', async () => {
    const [p, r] = await both('copy orders to stdout (format binary)');
    assert.deepEqual(r.response, p.response);
    assert.equal(r.tag, 'COPY 300');
    assert.deepEqual(binaryParts(r.data), binaryParts(p.data));
    // Framed as Postgres frames it: the header with the first tuple, the trailer on its own.
    assert.equal(r.data.length, p.data.length);
    assert.equal(r.data.at(-1)?.toString('hex'), 'ffff');
  });

  test('a reference table comes from one node', async () => {
    const [p, r] = await both('copy countries to stdout with (format csv, header)');
    assert.deepEqual(r, p);
  });
});

describe('COPY (query) TO STDOUT across nodes', () => {
  const exact = [
    'copy (select * from orders order by tenant_id) to stdout',
    'copy (select tenant_id, note from orders order by tenant_id desc limit 50) to stdout with (format csv)',
    "copy (select note from orders order by tenant_id) to stdout (format csv, null 'NULL')",
    "copy (select note, total from orders order by tenant_id) to stdout (format text, delimiter '|', null '')",
    'copy (select id, count(*), sum(total), min(made) from orders group by id order by id) to stdout with (format csv, header)',
    'copy (select count(*) as "n,1", max(id) from orders) to stdout (format csv, header, force_quote *)',
    'copy (select tenant_id, note as "x y" from orders order by 1 offset 290) to stdout csv header force quote "x y" delimiter \';\'',
    'copy (select count(*) from (select distinct id from orders) d) to stdout',
    'copy (select * from orders order by tenant_id) to stdout (format binary)',
    'copy (select id, count(*), sum(total), min(made), max(note) from orders group by id order by id) to stdout (format binary)',
    'copy (select count(*) from orders where total > 1000) to stdout (format binary)',
  ];
  for (const sql of exact)
    test(`${sql} (merged at the router: byte for byte)`, async () => {
      const [p, r] = await both(sql);
      assert.equal(p.error, undefined, p.error?.message);
      assert.deepEqual(r, p);
    });

  for (const sql of [
    'copy (select tenant_id, note from orders where total > 100) to stdout',
    'copy (select o.tenant_id, c.name from orders o join countries c on c.code = o.note) to stdout (format csv)',
    'copy (select * from orders) to stdout with (format binary)',
  ])
    test(`${sql} (each node answers whole)`, async () => {
      const [p, r] = await both(sql);
      assert.deepEqual(r.response, p.response);
      assert.equal(r.tag, p.tag);
      if (sql.includes('binary')) assert.deepEqual(binaryParts(r.data), binaryParts(p.data));
      else assert.deepEqual(sortedLines(r.data), sortedLines(p.data));
    });

  test('errors are the ones Postgres gives', async () => {
    for (const sql of [
      'copy (select nosuch from orders) to stdout',
      'copy (select nosuch from orders order by tenant_id) to stdout',
      "copy (select * from orders order by tenant_id) to stdout (format csv, delimiter 'ab')",
      'copy (select tenant_id from orders order by 1) to stdout (format csv, force_quote (note))',
      'copy (select tenant_id from orders order by 1) to stdout (format text, header match)',
      'copy (select 1 / (tenant_id - 150) from orders order by tenant_id) to stdout',
    ]) {
      const [pe, re] = await both(sql);
      assert.ok(pe.error !== undefined, sql);
      assert.deepEqual(re.error, pe.error, sql);
    }
  });
});

describe('COPY TO STDOUT through node-postgres and pg-copy-streams', () => {
  async function copyOut(url: string, sqls: readonly string[]): Promise<string[]> {
    const cl = new pg.Client({ connectionString: url });
    await cl.connect();
    try {
      const out: string[] = [];
      for (const sql of sqls) {
        if (!sql.startsWith('copy')) {
          await cl.query(sql);
          continue;
        }
        const chunks: Buffer[] = [];
        await pipeline(
          cl.query(copyTo(sql)),
          new Writable({
            write(chunk: Buffer, _e, cb) {
              chunks.push(chunk);
              cb();
            },
          }),
        );
        out.push(sortedLines(chunks).join('\n'));
      }
      return out;
    } finally {
      await cl.end();
    }
  }

  test('inside a transaction block and outside one', async () => {
    const steps = [
      'copy orders (tenant_id, note) to stdout',
      'begin',
      "insert into orders values (1001, 1, 'in the transaction', 1, null)",
      'copy orders (tenant_id, note) to stdout with (format csv)',
      'copy (select tenant_id, note from orders order by tenant_id) to stdout',
      // Stopped early (LIMIT): each node's part is read to its end, never cancelled.
      'copy (select tenant_id from orders order by tenant_id limit 3) to stdout (format binary)',
      'copy (select count(*) from orders) to stdout',
      'rollback',
      'begin isolation level repeatable read',
      'copy (select count(*) from orders) to stdout',
      'commit',
    ];
    assert.deepEqual(await copyOut(c.url(), steps), await copyOut(plain.url(), steps));
  });
});
