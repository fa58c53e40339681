import { test } from 'node:test';
import assert from 'node:assert/strict';
import { killError, readBack, type Instance } from './failover-outcome.js';

test('a kill that went through every phase has no error; one that stalled names how far it got', () => {
  const all = { detected: true, promoted: true, newAddress: true, firstWrite: true };
  assert.equal(killError(all, 60_000), undefined);
  assert.equal(
    killError({ ...all, newAddress: false, firstWrite: false }, 60_000),
    'failover did not complete within 60 s: reached detection, promotion; not new address, first write',
  );
  assert.match(
    killError({ detected: false, promoted: false, newAddress: false, firstWrite: false }, 5_000)!,
    /reached no phase; not detection, promotion, new address, first write$/,
  );
});

const instance = (address: string, standby: boolean | Error, ids: number[] = []): Instance => ({
  address,
  query: <T>(sql: string): Promise<T[]> => {
    if (standby instanceof Error) return Promise.reject(standby);
    if (sql.includes('pg_is_in_recovery')) return Promise.resolve([{ standby }] as T[]);
    return Promise.resolve(ids.map((id) => ({ id: String(id) })) as T[]);
  },
});

test('the readback skips a node instance that is down or a standby and reads the primary', async () => {
  const acked = new Set([1, 2, 3]);
  assert.deepEqual(
    await readBack(
      [
        instance('a:1', new Error('connect ECONNREFUSED')),
        instance('b:2', true, [1, 2, 3]),
        instance('c:3', false, [1, 3, 4]),
      ],
      acked,
    ),
    { kind: 'read', from: 'c:3', lost: 1 },
  );
});

test('a node none of whose instances answers as a primary is unreadable, not a crash', async () => {
  const r = await readBack(
    [instance('a:1', new Error('connect ECONNREFUSED')), instance('b:2', true)],
    new Set([1]),
  );
  assert.equal(r.kind, 'unreadable');
  assert.match(
    r.kind === 'unreadable' ? r.reason : '',
    /a:1: connect ECONNREFUSED; b:2 is a standby/,
  );
});
