// The watch hub alone: epochs delivered once and in order even when published out of order,
// late epochs after a gap resynced, and a watcher that falls behind cut off.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { create, CatalogSchema, type Catalog } from '@tessera/proto';
import { CatalogError } from './errors.js';
import { WatchHub } from './watch-hub.js';

const snap = (epoch: number): Catalog =>
  create(CatalogSchema, { epoch: BigInt(epoch), clusterUid: 'u' });

async function take(it: AsyncIterator<Catalog>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    assert.equal(r.done, false);
    out.push(Number(r.value!.epoch));
  }
  return out;
}

test('a watcher sees the current snapshot, then every epoch in order, though published out of order', async () => {
  const hub = new WatchHub();
  hub.reset(snap(5));
  const it = hub.watch(0n)[Symbol.asyncIterator]();
  const first = take(it, 6);
  for (const e of [7, 6, 9, 10, 8, 11]) hub.publish(snap(e));
  hub.publish(snap(6)); // duplicates are ignored
  assert.deepEqual(await first, [5, 6, 7, 8, 9, 10]);
  assert.deepEqual(await take(it, 1), [11]);
  await it.return?.();
  assert.equal(hub.watcherCount, 0);
});

test('after_epoch at or above the current one waits for the next epoch', async () => {
  const hub = new WatchHub();
  hub.reset(snap(3));
  const it = hub.watch(3n)[Symbol.asyncIterator]();
  const next = take(it, 1);
  hub.publish(snap(4));
  assert.deepEqual(await next, [4]);
});

test('published() resolves once the epoch (or a later one) is out', async () => {
  const hub = new WatchHub();
  hub.reset(snap(1));
  let done = false;
  const p = hub.published(3n).then(() => (done = true));
  hub.publish(snap(3));
  await new Promise((r) => setImmediate(r));
  assert.equal(done, false, 'epoch 3 waits for 2');
  hub.publish(snap(2));
  await p;
});

test('a gap that never fills is resynced from the database after the timeout', async () => {
  const hub = new WatchHub({ gapTimeoutMs: 20, resync: async () => snap(4) });
  hub.reset(snap(1));
  const it = hub.watch(1n)[Symbol.asyncIterator]();
  hub.publish(snap(3)); // 2 was lost with its connection
  hub.publish(snap(5));
  assert.deepEqual(await take(it, 2), [4, 5]);
});

test('a watcher that falls more than maxQueue epochs behind ends with RESOURCE_EXHAUSTED', async () => {
  const hub = new WatchHub({ maxQueue: 3 });
  hub.reset(snap(1));
  const it = hub.watch(0n)[Symbol.asyncIterator]();
  for (let e = 2; e <= 6; e++) hub.publish(snap(e));
  await assert.rejects(
    it.next(),
    (e: unknown) => e instanceof CatalogError && e.code === 'RESOURCE_EXHAUSTED',
  );
  assert.equal(hub.watcherCount, 0);
});

test('close() ends every watcher with UNAVAILABLE and an aborted signal ends a waiting one', async () => {
  const hub = new WatchHub();
  hub.reset(snap(1));
  const a = hub.watch(1n)[Symbol.asyncIterator]();
  const ac = new AbortController();
  const b = hub.watch(1n, ac.signal)[Symbol.asyncIterator]();
  const pa = a.next();
  const pb = b.next();
  ac.abort();
  assert.deepEqual(await pb, { done: true, value: undefined });
  hub.close();
  await assert.rejects(pa, (e: unknown) => e instanceof CatalogError && e.code === 'UNAVAILABLE');
});
