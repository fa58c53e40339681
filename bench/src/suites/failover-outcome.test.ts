import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  killError,
  readBack,
  writesAfterKill,
  type Ack,
  type Instance,
  type WriteError,
} from './failover-outcome.js';

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
    assert.match(sql, /from rt$/);
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
      'rt',
    ),
    { kind: 'read', from: 'c:3', lost: 1 },
  );
});

test('a node none of whose instances answers as a primary is unreadable, not a crash', async () => {
  const r = await readBack(
    [instance('a:1', new Error('connect ECONNREFUSED')), instance('b:2', true)],
    new Set([1]),
    'rt',
  );
  assert.equal(r.kind, 'unreadable');
  assert.match(
    r.kind === 'unreadable' ? r.reason : '',
    /a:1: connect ECONNREFUSED; b:2 is a standby/,
  );
});

const kill = { node: 'data1' as const, killedAt: 1_000, goneAt: 1_030, oldServer: 'old:1' };
const ack = (issuedAt: number, at: number, server: string, node: Ack['node'] = 'data1'): Ack => ({
  issuedAt,
  at,
  node,
  server,
});
const err = (at: number, node: WriteError['node'] = 'data1'): WriteError => ({
  at,
  node,
  message: 'x',
});

test('the first write after a kill is one issued once the killed primary was gone', () => {
  const acks = [
    ack(990, 1_001, 'router:9'), // in flight at the kill: the old primary may have answered it
    ack(1_010, 1_020, 'router:9'), // issued before the SIGKILL landed: same
    ack(1_200, 1_250, 'router:9', 'home'), // another node's rows
    ack(1_400, 2_500, 'router:9'), // held by the router, then run on the new primary
    ack(2_000, 2_600, 'router:9'),
  ];
  const errors = [err(900), err(1_100), err(1_300, 'home'), err(2_400), err(2_501)];
  const r = writesAfterKill(acks, errors, kill);
  assert.equal(r.firstAckAt, 2_500);
  assert.deepEqual(
    r.errors.map((e) => e.at),
    [1_100, 2_400],
    'errors on the node from the kill to the first write, not before it, after it or elsewhere',
  );
});

test('a direct writer still on the killed address does not count; none at all: every error since', () => {
  const r = writesAfterKill([ack(1_500, 1_510, 'old:1')], [err(1_200), err(5_000)], kill);
  assert.equal(r.firstAckAt, undefined);
  assert.equal(r.errors.length, 2);
  assert.equal(writesAfterKill([ack(1_500, 1_510, 'new:2')], [], kill).firstAckAt, 1_510);
});
