// planFill/applyFill: which values of an INSERT the router writes in, and how; and the block
// allocator's prefetch. Pure (the coordinator's side is in apps/coordinator's
// sequence-blocks.test.ts, the whole path in conformance/sequences.test.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { analyze, initSqlParser, insertLayout, type InsertAnalysis } from '@tessera/sql';
import { RouterError } from '../errors.js';
import { SequenceBlocks, type SequenceDef } from './blocks.js';
import { tableInfoOf } from './columns.js';
import { applyFill, planFill } from './fill.js';

await initSqlParser();

const SEQ = ['public', 't_id_seq', '1', '1', '1', '9223372036854775807', 'false', '1'];
// id bigint generated always as identity, k bigint, u uuid default gen_random_uuid(), v text
const INFO = tableInfoOf('db', [
  ['id', 'a', null, ...SEQ],
  ['k', '', null, null, null, null, null, null, null, null, null],
  ['u', '', 'gen_random_uuid()', null, null, null, null, null, null, null, null],
  ['v', '', "'x'::text", null, null, null, null, null, null, null, null],
]);

function fill(sql: string, keyColumn: string | undefined, values: string[]): string | undefined {
  const a = analyze(sql) as InsertAnalysis;
  const plan = planFill(a, insertLayout(sql), INFO, { name: 'public.t', keyColumn });
  if (plan === undefined) return undefined;
  assert.equal(plan.slots.length, values.length);
  return applyFill(sql, plan, values);
}

test('left-out and DEFAULT sequence columns get values; ALWAYS identity gets OVERRIDING', () => {
  assert.equal(
    fill("insert into t (k, v) values (1, 'a'), (2, 'b')", 'k', ['10', '11']),
    "insert into t (k, v, id) overriding system value values (1, 'a', 10), (2, 'b', 11)",
  );
  assert.equal(
    fill('insert into t (id, k) values (default, 1) returning id', 'k', ['7']),
    'insert into t (id, k) overriding system value values (7, 1) returning id',
  );
});

test('a uuid default is the router’s only for the key; no column list is written out', () => {
  assert.equal(
    fill("insert into t values (default, 5, default, 'v')", 'u', ['3', "'uuid-1'"]),
    "insert into t (id, k, u, v) overriding system value values (3, 5, 'uuid-1', 'v')",
  );
  assert.equal(
    fill('insert into t (k) values (1)', 'k', ['4']),
    'insert into t (k, id) overriding system value values (1, 4)',
  );
});

test('an explicit value for an ALWAYS identity is refused as Postgres does', () => {
  assert.throws(
    () => fill('insert into t (id, k) values (5, 1)', 'k', []),
    (e: unknown) => e instanceof RouterError && e.sqlstate === '428C9',
  );
  assert.throws(
    () => fill('insert into t (k) select 1', 'k', []),
    (e: unknown) => e instanceof RouterError && e.sqlstate === '0A000',
  );
});

const DEF: SequenceDef = {
  key: 'db.public.s',
  name: 'public.s',
  start: 1n,
  increment: 2n,
  minValue: 1n,
  maxValue: 100n,
  cycle: false,
  floor: 1n,
};

test('blocks: one reservation at a time, the next one asked for at half use', async () => {
  const asked: bigint[] = [];
  let next = 1n;
  const blocks = new SequenceBlocks((def, count) => {
    asked.push(count);
    const first = next;
    const room = (def.maxValue - next) / def.increment + 1n;
    const n = room < count ? (room > 0n ? room : 0n) : count;
    next += n * def.increment;
    return Promise.resolve({ first, count: n });
  }, 10n);
  const first = await blocks.take(DEF, 3);
  assert.deepEqual(first, [1n, 3n, 5n]);
  assert.deepEqual(asked, [10n]);
  const now = blocks.take(DEF, 3);
  assert.deepEqual(now, [7n, 9n, 11n], 'taken synchronously from the block');
  await Promise.resolve();
  assert.deepEqual(asked, [10n, 10n], 'prefetched once under half');
  const all: bigint[] = [...first, ...(now as bigint[])];
  for (;;) {
    try {
      all.push(...(await blocks.take(DEF, 4)));
    } catch (e) {
      assert.ok(e instanceof RouterError && e.sqlstate === '2200H', String(e));
      break;
    }
  }
  assert.equal(new Set(all).size, all.length);
  assert.ok(all.every((v) => v <= 100n));
});
