// Txids and gids: unique, safe inside a gid, and parsed back exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gidFor, isSafeId, MAX_GID_BYTES, newTxid, parseGid } from './gid.js';

test('newTxid is unique and safe in a gid, whatever the router id', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) seen.add(newTxid('router-1'));
  assert.equal(seen.size, 10_000);
  for (const id of [...seen].slice(0, 10)) assert.ok(isSafeId(id), id);
  assert.ok(isSafeId(newTxid('we:ird id/ü')));
  assert.ok(isSafeId(newTxid('')));
});

test('gidFor and parseGid round-trip; other gids are not ours', () => {
  const uid = '0b0e6f1c-1f7a-4e43-9f3b-2c1e5b1d3a9e';
  const gid = gidFor(uid, 'r1-abc-1', 'data:1');
  assert.equal(gid, `tessera:${uid}:r1-abc-1:data:1`);
  assert.deepEqual(parseGid(gid), { clusterUid: uid, txid: 'r1-abc-1', node: 'data:1' });
  for (const other of [
    'someone-else:1',
    'tessera:x',
    'tessera:u::n',
    'tessera:u:t:',
    'tessera:u u:t:n',
  ])
    assert.equal(parseGid(other), undefined, other);
});

test('gidFor refuses ids that would break parsing or not fit', () => {
  assert.throws(() => gidFor('u', 'a:b', 'n'), /txid/);
  assert.throws(() => gidFor('u', '', 'n'), /txid/);
  assert.throws(() => gidFor('u:v', 't', 'n'), /cluster uid/);
  assert.throws(() => gidFor('u', 't', ''), /node name/);
  assert.throws(() => gidFor('u', 't', 'x'.repeat(MAX_GID_BYTES)), /longer than/);
});
