// Writer: several frames in one buffer, lengths patched, growth, and buffers handed over intact.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Writer } from './writer.js';
import { SYNC } from './frames.js';
import { writeQuery, writeSync } from './frontend-encode.js';

test('frames are laid out back to back with patched lengths', () => {
  const w = new Writer(8);
  writeQuery(w, 'select 1');
  writeSync(w);
  const b = w.flush();
  assert.equal(
    b.toString('hex'),
    '510000000d' + Buffer.from('select 1\0').toString('hex') + '5300000004',
  );
  assert.deepEqual(b.subarray(14), SYNC);
});

test('an untyped frame has a 4-byte header', () => {
  const w = new Writer();
  const b = w.begin().int32(80877103).end().flush();
  assert.deepEqual([...b], [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
});

test('grows past its initial size and keeps earlier bytes', () => {
  const w = new Writer(4);
  const long = 'é'.repeat(5000);
  w.begin(0x51).cstring(long).end();
  const b = w.flush();
  assert.equal(b.readInt32BE(1), 4 + Buffer.byteLength(long) + 1);
  assert.equal(b.toString('utf8', 5, b.length - 1), long);
});

test('a flushed buffer is not overwritten by later writes', () => {
  const w = new Writer();
  writeQuery(w, 'first');
  const a = w.flush();
  const copy = Buffer.from(a);
  writeQuery(w, 'second, longer');
  w.flush();
  assert.deepEqual(a, copy);
});

test('NUL inside a cstring is refused; misuse of begin/end throws', () => {
  const w = new Writer();
  assert.throws(() => w.cstring('a\0b'), TypeError);
  assert.throws(() => w.end());
  w.begin(0x51);
  assert.throws(() => w.begin(0x51));
  assert.throws(() => w.flush());
  w.reset();
  assert.equal(w.flush().length, 0);
});

test('int16 writes counts up to 65535 and -1; uint32 writes OIDs above 2^31', () => {
  const w = new Writer();
  const b = w.int16(65535).int16(-1).uint32(0xfffffff0).int32(-1).flush();
  assert.equal(b.toString('hex'), 'fffffffffffffff0ffffffff');
});
