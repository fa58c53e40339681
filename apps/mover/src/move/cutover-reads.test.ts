// Reads during and right after a cutover see every write acknowledged before they began (the soak's
// list-stale-read after a move, docs/soak.md "What the soak found"), as one Postgres would. Writers
// increment counters through two routers while a range of data1 moves to data2; the second
// router (a process of its own) is paused while the first attempt waits for its freeze
// acknowledgement, so that attempt aborts (budget 2 s, as in the soak) and a later one flips. Every read
// remembers, per key, the highest value acknowledged to any writer before it began, and must
// return at least that, once per key. Single-key reads go to the key's owner; multi-key reads
// (`id = any($1)`) go to both nodes, where the old owner still holds the moved rows until the
// cleanup (apps/mover/src/move/read-after-flip.test.ts shows that part alone).
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { hashKeyText } from '@tessera/pg-hash';
import { JobState, type Range } from '@tessera/proto';
import pg from 'pg';
import {
  bulkInsert,
  moveRequest,
  startMoverCluster,
  waitForJob,
  waitForPhase,
  type MoverCluster,
} from '../testing/cluster.js';
import { spawnRouter, type RouterProcess } from '../testing/router-process.js';

const KEYS = 48;
const CLIENTS_PER_ROUTER = 3;

let c: MoverCluster;
let second: RouterProcess;

before(async () => {
  c = await startMoverCluster({ ranges: 4 });
  const r = await c.viaRouter();
  try {
    const rows = Array.from({ length: KEYS }, (_, i) => [i + 1, 0]);
    await bulkInsert(r, 'accounts', ['id', 'balance'], rows);
  } finally {
    await r.end();
  }
  second = await spawnRouter(c.coordinator.address, 'pausable');
  await c.startMover({ cutoverBudgetMs: 2_000, cutoverAttempts: 30, deleteRowsPerSec: 200 });
});
after(async () => {
  await second?.kill();
  await c?.dispose();
});

/** The highest value acknowledged per key (a write's RETURNING, after its COMMIT). */
const acked = new Map<number, number>();
const singleStale: string[] = [];
const multiStale: string[] = [];
const reads = { single: 0, multi: 0 };

async function client(url: string): Promise<pg.Client> {
  const cl = new pg.Client({ connectionString: url });
  cl.on('error', () => undefined);
  await cl.connect();
  return cl;
}

const pick = () => 1 + Math.floor(Math.random() * KEYS);

async function loop(url: string, stop: () => boolean): Promise<void> {
  const cl = await client(url);
  try {
    while (!stop()) {
      const dice = Math.random();
      try {
        if (dice < 0.5) {
          const k = pick();
          const r = await cl.query<{ balance: string }>(
            'update accounts set balance = balance + 1 where id = $1 returning balance',
            [k],
          );
          const v = Number(r.rows[0]!.balance);
          if (v > (acked.get(k) ?? 0)) acked.set(k, v);
        } else if (dice < 0.75) {
          const k = pick();
          const floor = acked.get(k) ?? 0;
          const r = await cl.query<{ balance: string }>(
            'select balance from accounts where id = $1',
            [k],
          );
          reads.single++;
          const got = r.rows.map((x) => Number(x.balance));
          if (got.length !== 1 || got[0]! < floor)
            singleStale.push(
              `key ${k}: read ${JSON.stringify(got)} after ${floor} was acknowledged`,
            );
        } else {
          const keys = [...new Set([pick(), pick(), pick()])];
          const floors = keys.map((k) => acked.get(k) ?? 0);
          const r = await cl.query<{ id: string; balance: string }>(
            'select id, balance from accounts where id = any($1::bigint[])',
            [keys],
          );
          reads.multi++;
          keys.forEach((k, i) => {
            const got = r.rows.filter((x) => Number(x.id) === k).map((x) => Number(x.balance));
            if (got.length !== 1 || got[0]! < floors[i]!)
              multiStale.push(
                `key ${k}: read ${JSON.stringify(got)} after ${floors[i]} was acknowledged`,
              );
          });
        }
      } catch (e) {
        // Refusals and retryable errors (a held write past its deadline) are not answers.
        const code = (e as { code?: string }).code ?? '';
        if (!/^(40001|57014|08)/.test(code)) throw e;
      }
    }
  } finally {
    await cl.end().catch(() => undefined);
  }
}

/** Whether a cutover attempt of job `id` was aborted (the mover's progress of the step). */
async function aborted(id: bigint): Promise<boolean> {
  const job = await c.jobs.getJob({ id });
  return job.steps.some((s) => s.name === 'cutover' && s.progressJson.includes('abortedAttempts'));
}

test('reads through two routers during a cutover with an aborted first attempt see every acknowledged write', async () => {
  const cat = await c.catalog.getCatalog({});
  const moving = cat.ranges.find((r: Range) => r.keyspace === 'accounts' && r.owner === 'data1')!;
  const inMoving = [...Array(KEYS).keys()]
    .map((i) => i + 1)
    .filter((k) => {
      const h = hashKeyText('bigint', String(k), 0n);
      return moving.lo <= h && h <= moving.hi;
    });
  assert.ok(inMoving.length > 0, 'no key in the moving range');
  let stopped = false;
  const loops = [c.routerUrl(), second.url].flatMap((url) =>
    Array.from({ length: CLIENTS_PER_ROUTER }, () => loop(url, () => stopped)),
  );
  try {
    await new Promise((r) => setTimeout(r, 1_000));
    const job = await c.jobs.submitJob(moveRequest('accounts', moving.lo, 'data2'));
    // Paused before the freeze until an attempt aborted (well within its 10 s lease), the
    // router cannot acknowledge the freeze.
    await waitForPhase(c.jobs, job.id, 'catching up', 120_000);
    second.child.kill('SIGSTOP');
    const until = Date.now() + 8_000;
    while (Date.now() < until && !(await aborted(job.id)))
      await new Promise((r) => setTimeout(r, 20));
    second.child.kill('SIGCONT');
    const done = await waitForJob(c.jobs, job.id, 180_000);
    assert.equal(done.state, JobState.DONE, done.error);
    const result = JSON.parse(done.resultJson) as { cutover?: { attempts?: number } };
    const attempts = result.cutover?.attempts ?? 0;
    assert.ok(attempts >= 2, `the first cutover attempt was not aborted (${done.resultJson})`);
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    stopped = true;
    second.child.kill('SIGCONT');
    await Promise.all(loops);
  }
  assert.ok(reads.single > 50, `only ${reads.single} single-key reads`);
  assert.deepEqual(singleStale.slice(0, 10), [], 'single-key reads missed acknowledged writes');
});

test('multi-key reads in the same run see every acknowledged write, once per key', () => {
  assert.ok(reads.multi > 20, `only ${reads.multi} multi-key reads`);
  assert.deepEqual(multiStale.slice(0, 10), [], 'multi-key reads missed acknowledged writes');
});
