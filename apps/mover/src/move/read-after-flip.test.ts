// Reads right after a cutover (docs/soak.md, "What the soak found": list-read-multi missed
// acknowledged appends in the seconds after a flip). Between the flip and the cleanup that
// deletes the range's rows on the old owner, that node still holds them, frozen at the flip. A
// read pinned to keys on both nodes (`id = any($1)`) goes to both, and must return each key's row
// once, as it is now on its owner: the same as one plain Postgres given the same statements.
// The mover is stopped right after the release (kill point `verifying`), so the old copy stays.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { hashKeyText } from '@tessera/pg-hash';
import { JobState, RangeState, type Range } from '@tessera/proto';
import pg from 'pg';
import { moveRequest, startMoverCluster, type MoverCluster } from '../testing/cluster.js';
import { spawnMover } from '../testing/processes.js';

let c: MoverCluster;
let oracle: pg.Client;

before(async () => {
  c = await startMoverCluster({ ranges: 4 });
  await c.home.query('create database oracle');
  oracle = new pg.Client({ connectionString: c.home.url('oracle') });
  await oracle.connect();
  await oracle.query(
    'create table accounts (id bigint primary key, balance bigint not null default 0, note text)',
  );
});
after(async () => {
  await oracle?.end().catch(() => undefined);
  await c?.dispose();
});

/** Runs `sql` through the router and on the plain Postgres; returns both answers. */
async function both(via: pg.Client, sql: string, params: unknown[] = []) {
  const [r, o] = await Promise.all([via.query(sql, params), oracle.query(sql, params)]);
  return { router: r.rows, oracle: o.rows };
}

// Before the router restricted what a node returns to the ranges it owns (routing/owned-rows.ts),
// this read returned each moved key twice, the old owner's stale copy too (the soak's
// list-read-multi misses).
test('after the flip, before cleanup, a read of keys on both nodes returns the moved rows as their new owner has them', async () => {
  const cat = await c.catalog.getCatalog({});
  // One range of data1 moves to data2; another stays on data1, so the read spans both nodes.
  const [moving, staying] = cat.ranges.filter(
    (r) => r.keyspace === 'accounts' && r.owner === 'data1',
  ) as [Range, Range];
  const keyIn = (r: { lo: bigint; hi: bigint }, skip = 0) =>
    [...Array(10_000).keys()]
      .map((i) => BigInt(i + 1))
      .filter((k) => {
        const h = hashKeyText('bigint', k.toString(), 0n);
        return r.lo <= h && h <= r.hi;
      })[skip]!;
  const moved = [keyIn(moving, 0), keyIn(moving, 1)].map(String);
  const other = keyIn(staying).toString();
  const via = await c.viaRouter();
  try {
    for (const id of [...moved, other])
      await both(via, 'insert into accounts (id, balance) values ($1, 1)', [id]);
    const job = await c.jobs.submitJob(moveRequest('accounts', moving.lo, 'data2'));
    const m = spawnMover({
      coordinator: c.coordinator.address,
      moverId: 'read-after-flip',
      fault: 'verifying',
    });
    assert.equal(await m.exited, 'SIGKILL', 'the mover did not stop after the release');
    const j = await c.jobs.getJob({ id: job.id });
    assert.equal(j.state, JobState.RUNNING);
    const now = (await c.catalog.getCatalog({})).ranges.find((r) => r.lo === moving.lo)!;
    assert.equal(now.owner, 'data2');
    assert.equal(now.state, RangeState.ACTIVE);
    // The old owner still holds the moved rows (the cleanup has not run).
    const left = await c.byName
      .get('data1')!
      .query('select id from accounts where id = any($1::bigint[])', [moved]);
    assert.equal(left.length, moved.length);
    // A write through the router now goes to data2 (held, if the release is not there yet).
    for (const id of moved)
      await both(via, 'update accounts set balance = balance + 10 where id = $1', [id]);
    const keys = [...moved, other];
    const sorted = 'select id, balance from accounts where id = any($1::bigint[]) order by id';
    const a = await both(via, sorted, [keys]);
    assert.deepEqual(a.router, a.oracle, 'ordered multi-key read');
    const unordered = await both(
      via,
      'select id, balance from accounts where id = any($1::bigint[])',
      [keys],
    );
    const byId = (rows: { id: string }[]) => [...rows].sort((x, y) => (x.id < y.id ? -1 : 1));
    assert.deepEqual(byId(unordered.router), byId(unordered.oracle), 'unordered multi-key read');
    const n = await both(via, 'select count(*) from accounts where id = any($1::bigint[])', [keys]);
    assert.deepEqual(n.router, n.oracle, 'count of a multi-key read');
  } finally {
    await via.end();
  }
});
