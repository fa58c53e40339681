// Cluster-wide sequence blocks against a real Postgres: blocks never overlap, however many
// callers ask at once, they stop at the sequence's bound, and a new sequence starts past what the
// nodes gave already (its floor).
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import type pg from 'pg';
import { freshDatabase, startPostgres, type PgServer } from '../testing.js';
import { createPool, withClient } from './db.js';
import { migrate } from './migrations.js';
import { blockAt, SequenceBlocks, type SequenceParams } from './sequence-blocks.js';

let server: PgServer;
let pool: pg.Pool;
before(async () => {
  server = await startPostgres({ name: 'seqblocks' });
  pool = createPool(await freshDatabase(server), { max: 8 });
  await withClient(pool, migrate);
});
after(async () => {
  await pool.end();
  await server.dispose();
});

const UP: SequenceParams = {
  start: 1n,
  increment: 1n,
  minValue: 1n,
  maxValue: 2n ** 63n - 1n,
  floor: 1n,
};

test('blockAt stops at the bound, up and down', () => {
  assert.deepEqual(blockAt(1n, 10n, UP), { first: 1n, count: 10n });
  assert.deepEqual(blockAt(8n, 10n, { ...UP, maxValue: 10n }), { first: 8n, count: 3n });
  assert.deepEqual(blockAt(11n, 10n, { ...UP, maxValue: 10n }), { first: 11n, count: 0n });
  const down = { start: -1n, increment: -2n, minValue: -6n, maxValue: -1n, floor: -1n };
  assert.deepEqual(blockAt(-1n, 10n, down), { first: -1n, count: 3n });
});

test('concurrent allocations never overlap and cover the sequence from its floor', async () => {
  const seqs = new SequenceBlocks(pool);
  const params = { ...UP, increment: 5n, floor: 101n };
  const blocks = await Promise.all(
    Array.from({ length: 20 }, () => seqs.allocate('db.public.t_id_seq', 7n, params)),
  );
  const values = blocks.flatMap((b) =>
    Array.from({ length: Number(b.count) }, (_, i) => b.first + BigInt(i) * 5n),
  );
  assert.equal(new Set(values).size, 140);
  assert.equal(
    values.reduce((m, v) => (v < m ? v : m)),
    101n,
  );
  // Another sequence name is independent; a later, higher floor does not rewind anything.
  const other = await seqs.allocate('db.public.u_id_seq', 1n, UP);
  assert.equal(other.first, 1n);
  const again = await seqs.allocate('db.public.t_id_seq', 1n, { ...params, floor: 1n });
  assert.equal(again.first, 101n + 140n * 5n);
});

test('an exhausted sequence gives an empty block; bad requests are refused', async () => {
  const seqs = new SequenceBlocks(pool);
  const small = { ...UP, maxValue: 3n };
  assert.deepEqual(await seqs.allocate('db.public.small', 10n, small), { first: 1n, count: 3n });
  assert.equal((await seqs.allocate('db.public.small', 10n, small)).count, 0n);
  await assert.rejects(seqs.allocate('', 1n, UP), /sequence name/);
  await assert.rejects(seqs.allocate('x', 0n, UP), /1 to/);
});
