// Epochs without sockets: epoch E is acknowledged only once no statement admitted under an older
// epoch still runs, or at the drain deadline; held statements wait for a later epoch.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureCatalog } from '../routing/fixture-catalog.js';
import { Epochs } from './epochs.js';

function epochs(drainTimeoutMs = 10_000) {
  const acked: bigint[] = [];
  const deadlines: [bigint, number][] = [];
  const e = new Epochs({
    drainTimeoutMs,
    ackable: (x) => acked.push(x),
    deadlinePassed: (x, running) => deadlines.push([x, running]),
  });
  return { e, acked, deadlines };
}

describe('Epochs', () => {
  test('an epoch with nothing older running is acknowledged at once', () => {
    const { e, acked } = epochs();
    e.swap(fixtureCatalog({ epoch: 1n }));
    e.swap(fixtureCatalog({ epoch: 2n }));
    assert.deepEqual(acked, [1n, 2n]);
    assert.equal(e.ackable, 2n);
  });

  test('E waits for the statements admitted under E-1, not for its own', () => {
    const { e, acked } = epochs();
    const one = e.swap(fixtureCatalog({ epoch: 1n }));
    one.enter();
    one.enter();
    const two = e.swap(fixtureCatalog({ epoch: 2n }));
    two.enter();
    assert.deepEqual(acked, [1n]);
    assert.equal(e.olderRunning, 2);
    one.leave();
    assert.deepEqual(acked, [1n]);
    one.leave();
    assert.deepEqual(acked, [1n, 2n]);
    two.leave();
    e.swap(fixtureCatalog({ epoch: 3n }));
    assert.deepEqual(acked, [1n, 2n, 3n]);
  });

  test('a later epoch waits for every older one still running', () => {
    const { e, acked } = epochs();
    const one = e.swap(fixtureCatalog({ epoch: 1n }));
    one.enter();
    const two = e.swap(fixtureCatalog({ epoch: 2n }));
    two.enter();
    e.swap(fixtureCatalog({ epoch: 3n }));
    two.leave();
    assert.deepEqual(acked, [1n]);
    one.leave();
    assert.deepEqual(acked, [1n, 3n]);
  });

  test('past the drain deadline the epoch is acknowledged anyway, and says so', async () => {
    const { e, acked, deadlines } = epochs(30);
    const one = e.swap(fixtureCatalog({ epoch: 1n }));
    one.enter();
    e.swap(fixtureCatalog({ epoch: 2n }));
    assert.deepEqual(acked, [1n]);
    await new Promise((r) => setTimeout(r, 120));
    assert.deepEqual(acked, [1n, 2n]);
    assert.deepEqual(deadlines, [[2n, 1]]);
    one.leave();
    assert.deepEqual(acked, [1n, 2n]);
  });

  test('a held statement gets the next epoch, or nothing after its timeout or cancel', async () => {
    const { e } = epochs();
    e.swap(fixtureCatalog({ epoch: 1n }));
    const waiting = e.next(1n, 5_000);
    const two = e.swap(fixtureCatalog({ epoch: 2n }));
    assert.equal(await waiting.epoch, two);
    assert.equal(await e.next(1n, 5_000).epoch, two);
    assert.equal(await e.next(2n, 20).epoch, undefined);
    const cancelled = e.next(2n, 5_000);
    cancelled.cancel();
    assert.equal(await cancelled.epoch, undefined);
  });
});
