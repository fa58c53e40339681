// Binary COPY splitting and joining: every split point of the stream, NULL keys, header
// extensions, malformed tuples handed on whole, data after the trailer, several nodes joined.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BINARY_HEADER,
  BINARY_SIGNATURE,
  BINARY_TRAILER,
  BinaryCopyJoiner,
  BinaryCopySplitter,
} from './copy-binary.js';
import { ByteQueue } from './byte-queue.js';

const int16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const field = (v: Buffer | null): Buffer =>
  v === null ? int32(-1) : Buffer.concat([int32(v.length), v]);
const tuple = (...fields: (Buffer | null)[]): Buffer =>
  Buffer.concat([int16(fields.length), ...fields.map(field)]);
const int8 = (n: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const header = (extension = Buffer.alloc(0)): Buffer =>
  Buffer.concat([BINARY_SIGNATURE, int32(0), int32(extension.length), extension]);

interface Seen {
  all: Buffer[];
  tuples: { bytes: string; key: string | null; line: number }[];
  rest: { bytes: Buffer; line: number | undefined }[];
}

function split(
  chunks: readonly Buffer[],
  fieldCount = 2,
  keyIndex = 0,
  badKey?: (key: Buffer | null) => boolean,
): Seen {
  const seen: Seen = { all: [], tuples: [], rest: [] };
  const s = new BinaryCopySplitter(fieldCount, keyIndex, {
    all: (b) => seen.all.push(Buffer.from(b)),
    tuple: (bytes, key, line) => {
      if (badKey?.(key) === true) return false;
      seen.tuples.push({
        bytes: bytes.toString('hex'),
        key: key === null ? null : key.toString('hex'),
        line,
      });
      return true;
    },
    rest: (bytes, line) => seen.rest.push({ bytes: Buffer.from(bytes), line }),
  });
  for (const c of chunks) s.push(c);
  s.end();
  // Pieces of one kind that arrive in several calls are one stream: compare them joined.
  return {
    all: [Buffer.concat(seen.all)],
    tuples: seen.tuples,
    rest:
      seen.rest.length === 0
        ? []
        : [{ bytes: Buffer.concat(seen.rest.map((r) => r.bytes)), line: seen.rest[0]!.line }],
  };
}

function atEverySplit(
  data: Buffer,
  check: (seen: Seen) => void,
  ...rest: [number?, number?]
): void {
  check(split([data], ...rest));
  for (let i = 1; i < data.length; i++)
    check(split([data.subarray(0, i), data.subarray(i)], ...rest));
  // One byte at a time.
  check(
    split(
      [...data].map((b) => Buffer.from([b])),
      ...rest,
    ),
  );
}

describe('BinaryCopySplitter', () => {
  test('header to every node, tuples with their key and line, the trailer to every node', () => {
    const t1 = tuple(int8(1n), Buffer.from('one'));
    const t2 = tuple(int8(2n), null);
    const t3 = tuple(null, Buffer.from(''));
    const data = Buffer.concat([header(), t1, t2, t3, BINARY_TRAILER]);
    atEverySplit(data, (seen) => {
      assert.deepEqual(seen.all[0], Buffer.concat([header(), BINARY_TRAILER]));
      assert.deepEqual(seen.tuples, [
        { bytes: t1.toString('hex'), key: int8(1n).toString('hex'), line: 1 },
        { bytes: t2.toString('hex'), key: int8(2n).toString('hex'), line: 2 },
        { bytes: t3.toString('hex'), key: null, line: 3 },
      ]);
      assert.deepEqual(seen.rest, []);
    });
  });

  test('the key field may be any of the columns; a header extension goes to every node', () => {
    const t = tuple(Buffer.from('a'), Buffer.from('key'));
    const data = Buffer.concat([header(Buffer.from('ext!')), t]);
    atEverySplit(
      data,
      (seen) => {
        assert.deepEqual(seen.all[0], header(Buffer.from('ext!')));
        assert.equal(seen.tuples[0]?.key, Buffer.from('key').toString('hex'));
      },
      2,
      1,
    );
  });

  test('a stream without its signature goes whole to every node (each fails as Postgres)', () => {
    const data = Buffer.concat([Buffer.from('PGCOPY\nX'), int32(5), tuple(int8(1n), null)]);
    atEverySplit(data, (seen) => {
      assert.deepEqual(seen.all[0], data);
      assert.deepEqual(seen.tuples, []);
    });
    // A header cut short: what came goes to every node.
    assert.deepEqual(
      split([BINARY_SIGNATURE.subarray(0, 5)]).all[0],
      BINARY_SIGNATURE.subarray(0, 5),
    );
  });

  test('a tuple with another field count, a bad length or an unreadable key: it and the rest to one node', () => {
    const good = tuple(int8(1n), null);
    const three = tuple(int8(2n), null, null);
    const after = tuple(int8(3n), null);
    atEverySplit(Buffer.concat([header(), good, three, after, BINARY_TRAILER]), (seen) => {
      assert.equal(seen.tuples.length, 1);
      assert.deepEqual(seen.rest, [
        { bytes: Buffer.concat([three, after, BINARY_TRAILER]), line: 2 },
      ]);
    });
    const negative = Buffer.concat([int16(2), int32(8), int8(5n), int32(-7)]);
    atEverySplit(Buffer.concat([header(), good, negative]), (seen) => {
      assert.deepEqual(seen.rest, [{ bytes: negative, line: 2 }]);
    });
    const short = tuple(Buffer.from([1, 2, 3]), null);
    const bad = split(
      [Buffer.concat([header(), good, short, after])],
      2,
      0,
      (k) => k?.length !== 8,
    );
    assert.deepEqual(bad.rest, [{ bytes: Buffer.concat([short, after]), line: 2 }]);
  });

  test('data after the trailer and a tuple cut short go to one node, numbered as Postgres counts', () => {
    const good = tuple(int8(1n), null);
    atEverySplit(Buffer.concat([header(), good, BINARY_TRAILER, Buffer.from([7])]), (seen) => {
      assert.deepEqual(seen.all[0], Buffer.concat([header(), BINARY_TRAILER]));
      assert.deepEqual(seen.rest, [{ bytes: Buffer.from([7]), line: 2 }]);
    });
    const cut = tuple(int8(2n), Buffer.from('xyz')).subarray(0, 9);
    atEverySplit(Buffer.concat([header(), good, cut]), (seen) => {
      assert.deepEqual(seen.rest, [{ bytes: cut, line: 2 }]);
    });
    // No trailer at all: the data simply ends, as Postgres accepts.
    assert.deepEqual(split([Buffer.concat([header(), good])]).rest, []);
  });
});

describe('BinaryCopyJoiner', () => {
  const stream = (...tuples: Buffer[]): Buffer =>
    Buffer.concat([BINARY_HEADER, ...tuples, BINARY_TRAILER]);

  test('one header, every node tuples, one trailer, at every split of each stream', () => {
    const a = [tuple(int8(1n), Buffer.from('a')), tuple(int8(2n), null)];
    const b = [tuple(int8(3n), Buffer.from('bb'))];
    const want = Buffer.concat([BINARY_HEADER, ...a, ...b, BINARY_TRAILER]);
    const sa = stream(...a);
    const sb = stream(...b);
    for (let i = 0; i <= sa.length; i++) {
      for (const j of [0, 1, 5, 19, 21, sb.length]) {
        const out: Buffer[] = [];
        const joiner = new BinaryCopyJoiner((x) => out.push(Buffer.from(x)));
        joiner.push(sa.subarray(0, i));
        joiner.push(sa.subarray(i));
        joiner.nextStream();
        joiner.push(sb.subarray(0, j));
        joiner.push(sb.subarray(j));
        joiner.nextStream();
        joiner.push(stream());
        joiner.end();
        assert.deepEqual(Buffer.concat(out), want, `split at ${i}, ${j}`);
      }
    }
  });

  test('no node sent anything: a header and a trailer; a stream cut short is an error', () => {
    const out: Buffer[] = [];
    const joiner = new BinaryCopyJoiner((x) => out.push(x));
    joiner.end();
    assert.deepEqual(Buffer.concat(out), stream());
    const cut = new BinaryCopyJoiner(() => undefined);
    cut.push(stream(tuple(int8(1n))).subarray(0, 24));
    assert.throws(() => cut.nextStream(), /middle of a tuple/);
  });

  test('a field length below -1 is an error, not a field of no bytes', () => {
    const bad = Buffer.from([0, 1, 0xff, 0xff, 0xff, 0xfe]);
    const joiner = new BinaryCopyJoiner(() => undefined);
    assert.throws(() => joiner.push(Buffer.concat([BINARY_HEADER, bad])), /below -1/);
  });
});

describe('ByteQueue', () => {
  test('integers across chunk boundaries, takes as views or copies', () => {
    const q = new ByteQueue();
    q.push(Buffer.from([0xff]));
    q.push(Buffer.from([0xfe, 0, 0]));
    q.push(Buffer.from([1, 2]));
    assert.equal(q.int16At(0), -2);
    assert.equal(q.int32At(1), 0xfe000001 | 0);
    assert.equal(q.int32At(2), 0x00000102);
    assert.deepEqual(q.take(2), Buffer.from([0xff, 0xfe]));
    assert.equal(q.length, 4);
    assert.deepEqual(q.take(4), Buffer.from([0, 0, 1, 2]));
    assert.equal(q.length, 0);
  });
});
