// Reads during a move see each row once (docs/architecture.md, "Reads during moves"): the mover
// is held in its phases where a range's rows sit on two nodes (copied and catching up; flipped,
// before teardown; torn down, before the old owner's rows are deleted), and there the router's
// scatter reads, aggregates, joins, COPY TO STDOUT and keyless writes must answer exactly what one
// plain Postgres holding the same rows answers. The oracle is a database on the home server.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { JobState } from '@tessera/proto';
import {
  bulkInsert,
  moveRequest,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';

const ACCOUNTS = 600;
/** Phases in which the moving range's rows are on both nodes. */
const HELD = ['catching up', 'cleaning up', 'deleting'];

const READS = [
  'select id, balance from accounts order by id',
  'select count(*) from accounts',
  'select count(*), sum(balance), min(id), max(id) from accounts where balance > 100',
  'select balance % 7 as b, count(*) from accounts group by 1 order by 1',
  'select a.id, count(*), sum(e.amount) from accounts a join entries e on e.account_id = a.id group by a.id order by a.id',
  'select count(*) from accounts a join entries e on e.account_id = a.id',
  'select id from accounts order by balance desc, id limit 7',
  'select count(*) from (select distinct balance from accounts) d',
  // COPY's rows, compared as sorted lines (a table's come in heap order).
  'copy accounts to stdout',
  'copy (select id, balance from accounts where balance > 100) to stdout with (format csv)',
  'copy (select id, balance from accounts order by balance, id) to stdout',
];

let c: MoverCluster;
let oracle: pg.Client;
let via: pg.Client;

/** The lines a COPY TO STDOUT wrote, sorted. */
async function copyLines(client: pg.Client, sql: string): Promise<string[]> {
  const chunks: Buffer[] = [];
  await pipeline(
    client.query(copyTo(sql)),
    new Writable({
      write(chunk: Buffer, _e, cb) {
        chunks.push(chunk);
        cb();
      },
    }),
  );
  return Buffer.concat(chunks).toString().split('\n').sort();
}

async function both(sql: string): Promise<{ router: unknown; oracle: unknown }> {
  if (sql.startsWith('copy'))
    return { router: await copyLines(via, sql), oracle: await copyLines(oracle, sql) };
  const [r, o] = [await via.query(sql), await oracle.query(sql)];
  return {
    router: { rows: r.rows, rowCount: r.rowCount },
    oracle: { rows: o.rows, rowCount: o.rowCount },
  };
}

before(async () => {
  c = await startMoverCluster({ ranges: 4 });
  await c.home.query('create database oracle');
  oracle = new pg.Client({ connectionString: c.home.url('oracle') });
  await oracle.connect();
  via = await c.viaRouter();
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => [i + 1, (i * 37) % 500]);
  const entries = accounts.flatMap(([id]) => [
    [id, 1, id! % 11],
    [id, 2, id! % 13],
  ]);
  for (const client of [via, oracle]) {
    if (client === oracle)
      for (const sql of [
        'create table accounts (id bigint primary key, balance bigint not null default 0, note text)',
        'create table entries (account_id bigint not null, seq bigint not null, amount bigint not null, primary key (account_id, seq))',
      ])
        await client.query(sql);
    await bulkInsert(client, 'accounts', ['id', 'balance'], accounts);
    await bulkInsert(client, 'entries', ['account_id', 'seq', 'amount'], entries);
  }
});
after(async () => {
  await via?.end();
  await oracle?.end();
  await c?.dispose();
});

test('reads and keyless writes through the router see each row once while a range is on two nodes', async () => {
  const cat = await c.catalog.getCatalog({});
  const r = cat.ranges.find((x) => x.keyspace === 'accounts' && x.owner === 'data1')!;
  const seen: string[] = [];
  const failures: string[] = [];
  const check = async (phase: string): Promise<void> => {
    seen.push(phase);
    // The moving range's rows are on both nodes (else this phase proves nothing).
    const inRange = `hashint8extended(id, 0) between ${r.lo} and ${r.hi}`;
    for (const node of ['data1', 'data2']) {
      const n = (
        await c.byName
          .get(node)!
          .query<{ n: string }>(`select count(*) as n from accounts where ${inRange}`)
      )[0]!.n;
      if (Number(n) === 0) failures.push(`${phase}: no rows of the range on ${node}`);
    }
    const statements = [
      ...READS,
      `update accounts set balance = balance + 1 where balance % 5 = ${seen.length}`,
      `delete from entries where seq = 2 and amount = ${seen.length}`,
      ...READS,
    ];
    for (const sql of statements) {
      try {
        const got = await both(sql);
        if (JSON.stringify(got.router) !== JSON.stringify(got.oracle))
          failures.push(
            `${phase}: ${sql}: router ${JSON.stringify(got.router).slice(0, 200)} vs one Postgres ${JSON.stringify(got.oracle).slice(0, 200)}`,
          );
      } catch (e) {
        failures.push(`${phase}: ${sql}: ${(e as Error).message}`);
      }
    }
  };
  const mover = await c.startMover(
    {},
    {
      hooks: {
        onPhase: async (_job, phase) => {
          if (HELD.includes(phase)) await check(phase);
        },
      },
    },
  );
  try {
    const job = await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2'));
    const done = await waitForJob(c.jobs, job.id, 180_000);
    assert.equal(done.state, JobState.DONE, done.error);
  } finally {
    await mover.stop();
  }
  assert.deepEqual(seen, HELD);
  assert.deepEqual(failures, []);
  // And after the move, the same again.
  for (const sql of READS) {
    const got = await both(sql);
    assert.deepEqual(got.router, got.oracle, sql);
  }
});
