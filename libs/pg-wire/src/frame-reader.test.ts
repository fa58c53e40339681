// FrameReader: frames out of arbitrary chunking, views that respect offsets, limits enforced
// before allocation, and a buffer that stays bounded.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { FrameReader, frameBytes } from './frame-reader.js';
import { ProtocolError } from './errors.js';
import { Writer } from './writer.js';
import { writeQuery, writeStartupMessage, writeSync } from './frontend-encode.js';
import { writeDataRow, writeReadyForQuery } from './backend-encode.js';
import { decodeQuery } from './frontend-decode.js';
import { parseStartup } from './startup.js';

/** Whether `view` lies inside `chunk`'s memory (small buffers share pool memory, so compare ranges). */
function within(view: Buffer, chunk: Buffer): boolean {
  return (
    view.buffer === chunk.buffer &&
    view.byteOffset >= chunk.byteOffset &&
    view.byteOffset + view.length <= chunk.byteOffset + chunk.length
  );
}

/** Size of the segment the reader currently reads from (a pushed chunk or an assembled frame). */
function internalSize(r: FrameReader): number {
  return (r as unknown as { buf: Buffer }).buf.length;
}

test('many frames in one chunk come out in order, bodies are views at the right offsets', () => {
  const w = new Writer();
  writeQuery(w, 'select 1');
  writeSync(w);
  writeQuery(w, 'select 2');
  const bytes = w.flush();
  const r = new FrameReader();
  r.push(bytes);
  const a = r.next();
  const b = r.next();
  const c = r.next();
  assert.equal(r.next(), undefined);
  assert.equal(a?.code, 0x51);
  assert.equal(b?.code, 0x53);
  assert.equal(b?.body.length, 0);
  assert.equal(decodeQuery(a!.body), 'select 1');
  assert.equal(decodeQuery(c!.body), 'select 2');
  // A view: same memory as the chunk, not a copy.
  assert.ok(within(c!.body, bytes));
  const dv = new DataView(c!.body.buffer, c!.body.byteOffset, c!.body.byteLength);
  assert.equal(dv.getUint8(0), 's'.charCodeAt(0));
  assert.deepEqual(frameBytes(c!), bytes.subarray(bytes.length - 14));
});

test('a frame split at every byte boundary, pushed byte by byte', () => {
  const w = new Writer();
  writeDataRow(w, ['a', null, 'ccc']);
  writeReadyForQuery(w, 'T');
  const bytes = w.flush();
  const r = new FrameReader();
  const got: [number, string][] = [];
  for (let i = 0; i < bytes.length; i++) {
    r.push(bytes.subarray(i, i + 1));
    for (let f = r.next(); f; f = r.next()) got.push([f.code, f.body.toString('hex')]);
  }
  assert.deepEqual(
    got.map((g) => g[0]),
    [0x44, 0x5a],
  );
  assert.equal(got[1]?.[1], '54');
  assert.equal(r.buffered, 0);
  // The source buffer was never written into.
  const again = new Writer();
  writeDataRow(again, ['a', null, 'ccc']);
  writeReadyForQuery(again, 'T');
  assert.deepEqual(bytes, again.flush());
});

test('startup packet first, then typed frames from the same chunk', () => {
  const w = new Writer();
  writeStartupMessage(w, { user: 'alice', database: 'app' });
  writeQuery(w, 'select 1');
  const r = new FrameReader();
  r.push(w.flush());
  const startup = r.readStartup();
  assert.ok(startup);
  const p = parseStartup(startup!);
  assert.equal(p.kind, 'startup');
  if (p.kind === 'startup') assert.equal(p.params.get('user'), 'alice');
  assert.equal(decodeQuery(r.next()!.body), 'select 1');
});

test('lengths below 4, above the limit, and 2^31-1 throw ProtocolError 08P01 before allocating', () => {
  for (const len of [0, 1, 3, -1, 0x7fffffff, 2 ** 30 + 1]) {
    const r = new FrameReader();
    const head = Buffer.alloc(5);
    head[0] = 0x51;
    head.writeInt32BE(len | 0, 1);
    r.push(head);
    assert.throws(
      () => r.next(),
      (e: unknown) => e instanceof ProtocolError && e.sqlstate === '08P01',
      `length ${len}`,
    );
    assert.ok(internalSize(r) < 64, 'nothing allocated for the claimed length');
  }
  // A caller-chosen pre-login limit.
  const r = new FrameReader({ maxFrameLength: 1000 });
  r.push(Buffer.from([0x70, 0, 0, 0x03, 0xe9]));
  assert.throws(() => r.next(), ProtocolError);
  const ok = new FrameReader({ maxFrameLength: 1000 });
  ok.push(Buffer.from([0x70, 0, 0, 0x03, 0xe8]));
  assert.equal(ok.next(), undefined);
});

test('a huge allowed length allocates nothing until the whole frame has arrived', () => {
  const r = new FrameReader({ maxFrameLength: 0x7fffffff });
  const head = Buffer.from([0x64, 0x7f, 0xff, 0xff, 0xff]);
  r.push(head);
  assert.equal(r.next(), undefined);
  r.push(Buffer.alloc(100));
  assert.equal(r.next(), undefined);
  assert.equal(r.buffered, 105);
  assert.ok(internalSize(r) <= 64);
});

test('only a frame that straddles chunks is copied; frames inside a chunk are views of it', () => {
  const w = new Writer();
  writeQuery(w, 'one');
  writeQuery(w, 'two');
  writeQuery(w, 'three');
  const bytes = w.flush();
  // Chunk A ends in the middle of the second frame; chunk B holds its rest and the third.
  const a = Buffer.from(bytes.subarray(0, 13));
  const b = Buffer.from(bytes.subarray(13));
  const r = new FrameReader();
  r.push(a);
  assert.ok(within(r.next()!.body, a));
  assert.equal(r.next(), undefined);
  r.push(b);
  const second = r.next();
  assert.equal(decodeQuery(second!.body), 'two');
  assert.ok(
    !within(second!.body, a) && !within(second!.body, b),
    'the straddling frame is assembled',
  );
  const third = r.next();
  assert.equal(decodeQuery(third!.body), 'three');
  assert.ok(within(third!.body, b), 'the rest of chunk B is read in place');
  assert.equal(r.next(), undefined);
});

test('startup packet lengths below 8 or above the startup limit are refused', () => {
  for (const len of [0, 4, 7, 10001, 0x7fffffff, -5]) {
    const r = new FrameReader();
    const b = Buffer.alloc(8);
    b.writeInt32BE(len, 0);
    r.push(b);
    assert.throws(() => r.readStartup(), ProtocolError, `length ${len}`);
  }
  const r = new FrameReader({ maxStartupLength: 100 });
  r.push(Buffer.from([0, 0, 0, 101]));
  assert.throws(() => r.readStartup(), ProtocolError);
});

test('the buffer stays bounded over a long stream of small chunks', () => {
  const w = new Writer();
  for (let i = 0; i < 2000; i++) writeQuery(w, `select ${i}, ${'x'.repeat(i % 50)}`);
  const bytes = w.flush();
  const r = new FrameReader();
  let count = 0;
  let maxSize = 0;
  for (let i = 0; i < bytes.length; i += 7) {
    r.push(bytes.subarray(i, i + 7));
    for (let f = r.next(); f; f = r.next()) {
      assert.equal(decodeQuery(f.body).startsWith(`select ${count},`), true);
      count++;
    }
    maxSize = Math.max(maxSize, internalSize(r));
  }
  assert.equal(count, 2000);
  assert.ok(maxSize <= 16 * 1024, `buffer grew to ${maxSize}`);
});

test('a large frame trickling in, then small ones: memory is released', () => {
  const big = Buffer.alloc(8 * 1024 * 1024, 0x61);
  const w = new Writer();
  w.begin(0x64).bytes(big).end();
  const bytes = w.flush();
  const r = new FrameReader();
  for (let i = 0; i < bytes.length; i += 65536) r.push(bytes.subarray(i, i + 65536));
  const f = r.next();
  assert.equal(f?.body.length, big.length);
  assert.ok(internalSize(r) >= big.length);
  // Next: a partial small frame; the big buffer should not be kept for it.
  r.push(Buffer.from([0x51, 0, 0, 0]));
  r.push(Buffer.from([6, 0x61, 0]));
  assert.equal(decodeQuery(r.next()!.body), 'a');
  assert.ok(internalSize(r) < 1024 * 1024);
});

test('takeBuffered hands over unconsumed bytes', () => {
  const r = new FrameReader();
  r.push(Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f, 1, 2, 3]));
  assert.deepEqual(parseStartup(r.readStartup()!), { kind: 'ssl' });
  assert.deepEqual([...r.takeBuffered()], [1, 2, 3]);
  assert.equal(r.buffered, 0);
});

test('nextCode walks frames without making them; frameBody and frameByte read the last one', () => {
  const w = new Writer();
  writeQuery(w, 'select 1');
  writeReadyForQuery(w, 'T');
  const bytes = w.flush();
  const r = new FrameReader();
  // Split inside the second frame: it is assembled once, and still described exactly.
  r.push(bytes.subarray(0, bytes.length - 3));
  assert.equal(r.nextCode(), 0x51);
  assert.equal(decodeQuery(r.frameBody()), 'select 1');
  assert.ok(within(r.frameBody(), bytes));
  assert.equal(r.frameByte(5), 's'.charCodeAt(0));
  const whole = Buffer.from(r.frameMemory, r.frameAt, r.frameSize);
  assert.deepEqual(whole, bytes.subarray(0, r.frameSize));
  assert.equal(r.nextCode(), -1);
  r.push(bytes.subarray(bytes.length - 3));
  assert.equal(r.nextCode(), 0x5a);
  assert.equal(r.frameSize, 6);
  assert.equal(r.frameByte(5), 'T'.charCodeAt(0));
  assert.deepEqual(r.frameBody(), Buffer.from('T'));
  assert.equal(r.nextCode(), -1);
});

test('nextWhole: raw is the whole frame, body (made on first use) the bytes after the length', () => {
  const w = new Writer();
  writeSync(w);
  writeQuery(w, 'select 2');
  const bytes = w.flush();
  const r = new FrameReader();
  r.push(bytes);
  const sync = r.nextWhole()!;
  const query = r.nextWhole()!;
  assert.equal(r.nextWhole(), undefined);
  assert.equal(sync.code, 0x53);
  assert.equal(sync.body.length, 0);
  assert.deepEqual(query.raw, bytes.subarray(5));
  assert.ok(within(query.raw, bytes) && within(query.body, bytes));
  assert.equal(decodeQuery(query.body), 'select 2');
  assert.equal(query.body, query.body, 'the view is made once');
});
