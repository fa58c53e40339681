// The move's own copy (move/copy.ts): a column type with no binary form goes as text while the
// other tables go binary; a mover SIGKILLed in the middle of the copy (some tables committed on
// the target, the last one's rows sent but not committed, a slot and no subscription) is resumed
// to every row of the range exactly once on the target, or cancelled to none there; either way
// no slot outlives the job.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { JobState, type Range } from '@tessera/proto';
import {
  DEFAULT_SCHEMA,
  bulkInsert,
  moveRequest,
  replicationLeftovers,
  startMoverCluster,
  waitForJob,
  type MoverCluster,
} from '../testing/cluster.js';
import { spawnMover } from '../testing/processes.js';
import { FAULT_COPY_UNCOMMITTED } from './copy.js';

let c: MoverCluster;
const ROWS = 3_000;

// A base type made of text's own I/O functions but with no send/receive: COPY cannot write it
// in binary, so the copy must choose text for its table.
const RAWTEXT = [
  `create type rawtext`,
  `create function rawtext_in(cstring) returns rawtext language internal immutable strict as 'textin'`,
  `create function rawtext_out(rawtext) returns cstring language internal immutable strict as 'textout'`,
  `create type rawtext (input = rawtext_in, output = rawtext_out, like = text)`,
];

before(async () => {
  c = await startMoverCluster({
    ranges: 6,
    tables: [
      { name: 'accounts', keyColumn: 'id' },
      { name: 'entries', keyColumn: 'account_id' },
      { name: 'notes', keyColumn: 'id' },
    ],
    schema: DEFAULT_SCHEMA,
  });
  for (const s of c.byName.values()) for (const sql of RAWTEXT) await s.query(sql);
  const r = await c.viaRouter();
  try {
    await r.query(
      `create table notes (id bigint primary key, body rawtext not null, tags text[], at timestamptz default now())`,
    );
    const ids = Array.from({ length: ROWS }, (_, i) => i + 1);
    await bulkInsert(
      r,
      'accounts',
      ['id', 'balance', 'note'],
      ids.map((i) => [i, i, `n${i}`]),
    );
    await bulkInsert(
      r,
      'entries',
      ['account_id', 'seq', 'amount'],
      ids.map((i) => [i, 1, i * 3]),
    );
    await bulkInsert(
      r,
      'notes',
      ['id', 'body'],
      ids.map((i) => [i, `body ${i} with 'quotes', a tab\there and a \\ backslash`]),
    );
  } finally {
    await r.end();
  }
});
after(async () => {
  await c?.dispose();
});

const TABLES = [
  {
    name: 'accounts',
    key: 'id',
    digest: `md5(string_agg(id || ':' || balance || ':' || coalesce(note, ''), ',' order by id))`,
  },
  {
    name: 'entries',
    key: 'account_id',
    digest: `md5(string_agg(account_id || ':' || seq || ':' || amount, ',' order by account_id, seq))`,
  },
  {
    name: 'notes',
    key: 'id',
    digest: `md5(string_agg(id || ':' || body::text || ':' || extract(epoch from at), ',' order by id))`,
  },
];

/** Per table: rows of the range on `node`, and a digest of their values. */
async function rangeRows(node: string, r: Range): Promise<Record<string, [string, string]>> {
  const out: Record<string, [string, string]> = {};
  for (const t of TABLES) {
    const row = (
      await c.byName
        .get(node)!
        .query<{ n: string; d: string | null }>(
          `select count(*)::text as n, ${t.digest} as d from ${t.name} where hashint8extended(${t.key}, 0) between ${r.lo} and ${r.hi}`,
        )
    )[0]!;
    out[t.name] = [row.n, row.d ?? ''];
  }
  return out;
}

async function rangeOf(owner: string, skip: bigint[] = []): Promise<Range> {
  const cat = await c.catalog.getCatalog({});
  return cat.ranges.find(
    (r) => r.keyspace === 'accounts' && r.owner === owner && !skip.includes(r.lo),
  )!;
}

const moved: bigint[] = [];

test('a column type with no binary form is copied as text, the other tables binary; every row arrives', async () => {
  const r = await rangeOf('data1');
  moved.push(r.lo);
  const before = await rangeRows('data1', r);
  assert.ok(Number(before['notes']![0]) > 100, JSON.stringify(before));
  const m = spawnMover({ coordinator: c.coordinator.address, moverId: 'text-copy' });
  try {
    const job = await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2'));
    const done = await waitForJob(c.jobs, job.id);
    assert.equal(done.state, JobState.DONE, done.error);
    assert.deepEqual(await rangeRows('data2', r), before);
    const copied = m.log.filter((l) => l.msg === 'table copied');
    const format = Object.fromEntries(copied.map((l) => [l['table'], l['format']]));
    assert.deepEqual(format, {
      '"public"."accounts"': 'binary',
      '"public"."entries"': 'binary',
      '"public"."notes"': 'text',
    });
    const notes = copied.find((l) => l['table'] === '"public"."notes"')!;
    assert.match(String(notes['textBecause']), /no binary form/);
    // The step's rows are what the target's COPY counted.
    const copy = JSON.parse(done.steps.find((s) => s.name === 'copy')!.progressJson);
    const total = Object.values(before).reduce((n, [rows]) => n + Number(rows), 0);
    assert.equal(copy.rows, total);
    assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
  } finally {
    await m.stop();
  }
});

/** Kills a mover in the middle of the copy; checks what it left: rows, a slot, no subscription. */
async function killMidCopy(r: Range, moverId: string): Promise<bigint> {
  const dying = spawnMover({
    coordinator: c.coordinator.address,
    moverId,
    fault: FAULT_COPY_UNCOMMITTED,
  });
  const job = await c.jobs.submitJob(moveRequest('accounts', r.lo, 'data2'));
  assert.equal(await dying.exited, 'SIGKILL', 'the mover did not kill itself in the copy');
  assert.equal((await c.jobs.getJob({ id: job.id })).phase, 'copying');
  const left = await rangeRows('data2', r);
  assert.ok(Number(left['accounts']![0]) > 0, 'the first tables were committed on the target');
  assert.equal(left['notes']![0], '0', "the last table's rows were not committed");
  const leftovers = await replicationLeftovers(c.byName.values());
  assert.ok(
    leftovers.some((x) => / slot tessera_mv_\d+_0$/.test(x)),
    leftovers.join(),
  );
  assert.ok(!leftovers.some((x) => x.includes('subscription')), leftovers.join());
  return job.id;
}

test('a mover killed in the middle of the copy is resumed: every row of the range once on the target, no slot left', async () => {
  const r = await rangeOf('data1', moved);
  moved.push(r.lo);
  const before = await rangeRows('data1', r);
  const id = await killMidCopy(r, 'mid-copy');
  const next = spawnMover({ coordinator: c.coordinator.address, moverId: 'mid-copy' });
  try {
    const done = await waitForJob(c.jobs, id);
    assert.equal(done.state, JobState.DONE, done.error);
    assert.ok(
      next.log.some((l) => l.msg?.startsWith("discarded an earlier attempt's copy")),
      'the resumed copy discarded the first attempt',
    );
    assert.deepEqual(await rangeRows('data2', r), before);
    assert.deepEqual(
      Object.values(await rangeRows('data1', r)).map(([n]) => n),
      ['0', '0', '0'],
    );
    assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
  } finally {
    await next.stop();
  }
});

test('a mover killed in the middle of the copy, then the job cancelled: the slot and the copied rows go', async () => {
  const r = await rangeOf('data1', moved);
  const before = await rangeRows('data1', r);
  const id = await killMidCopy(r, 'mid-copy-cancel');
  await c.jobs.cancelJob({ id });
  const next = spawnMover({ coordinator: c.coordinator.address, moverId: 'mid-copy-cancel' });
  try {
    const done = await waitForJob(c.jobs, id);
    assert.equal(done.state, JobState.CANCELLED, done.error);
    assert.deepEqual(await rangeRows('data1', r), before);
    assert.deepEqual(
      Object.values(await rangeRows('data2', r)).map(([n]) => n),
      ['0', '0', '0'],
    );
    assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
    assert.equal(
      (await c.catalog.getCatalog({})).ranges.find((x) => x.lo === r.lo)!.owner,
      'data1',
    );
  } finally {
    await next.stop();
  }
});
