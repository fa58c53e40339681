// RangeMap.ownerOf: the containing range at every boundary, and against a linear scan over
// a thousand random ranges.
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { CatalogInvalidError, evenRanges, HASH_MAX, HASH_MIN, RangeMap } from './index.js';

interface Owned {
  lo: bigint;
  hi: bigint;
  owner: string;
}

/** A deterministic 64-bit generator (xorshift64*), so failures reproduce. */
function randoms(seed: bigint): () => bigint {
  let x = seed;
  return () => {
    x ^= x >> 12n;
    x ^= BigInt.asUintN(64, x << 25n);
    x ^= x >> 27n;
    return BigInt.asIntN(64, x * 2685821657736338717n);
  };
}

function owned(bounds: { lo: bigint; hi: bigint }[]): Owned[] {
  return bounds.map((r, i) => ({ ...r, owner: `n${i}` }));
}

test('a single-range keyspace maps every hash to its one range', () => {
  const map = new RangeMap('one', owned([{ lo: HASH_MIN, hi: HASH_MAX }]));
  assert.equal(map.size, 1);
  for (const h of [HASH_MIN, HASH_MIN + 1n, -1n, 0n, 1n, HASH_MAX - 1n, HASH_MAX]) {
    assert.equal(map.ownerOf(h).owner, 'n0');
  }
});

test('ownerOf is right at lo, hi and one either side of every boundary', () => {
  const ranges = owned([
    { lo: HASH_MIN, hi: HASH_MIN },
    { lo: HASH_MIN + 1n, hi: -101n },
    { lo: -100n, hi: -1n },
    { lo: 0n, hi: 0n },
    { lo: 1n, hi: 2n ** 62n },
    { lo: 2n ** 62n + 1n, hi: HASH_MAX - 1n },
    { lo: HASH_MAX, hi: HASH_MAX },
  ]);
  // Built from a shuffled copy: the map orders ranges itself.
  const map = new RangeMap('edges', [...ranges].reverse());
  assert.deepEqual(map.ranges, ranges);
  ranges.forEach((r, i) => {
    assert.equal(map.ownerOf(r.lo), r, `lo of #${i}`);
    assert.equal(map.ownerOf(r.hi), r, `hi of #${i}`);
    if (r.lo > HASH_MIN) assert.equal(map.ownerOf(r.lo - 1n), ranges[i - 1], `lo-1 of #${i}`);
    if (r.hi < HASH_MAX) assert.equal(map.ownerOf(r.hi + 1n), ranges[i + 1], `hi+1 of #${i}`);
    if (r.hi > r.lo) {
      assert.equal(map.ownerOf(r.lo + 1n), r);
      assert.equal(map.ownerOf(r.hi - 1n), r);
    }
  });
});

test('ownerOf agrees with a linear scan over 1000 random ranges', () => {
  const next = randoms(0x9e3779b97f4a7c15n);
  const cuts = new Set<bigint>();
  while (cuts.size < 999) {
    const c = next();
    if (c !== HASH_MIN) cuts.add(c);
  }
  const los = [HASH_MIN, ...[...cuts].sort((a, b) => (a < b ? -1 : 1))];
  const ranges = owned(
    los.map((lo, i) => ({ lo, hi: i + 1 < los.length ? los[i + 1]! - 1n : HASH_MAX })),
  );
  const map = new RangeMap('random', ranges);
  const linear = (h: bigint) => ranges.find((r) => r.lo <= h && h <= r.hi);
  const probes = [HASH_MIN, HASH_MAX, 0n, -1n];
  for (const r of ranges) probes.push(r.lo, r.hi);
  for (let i = 0; i < 20_000; i++) probes.push(next());
  for (const h of probes) assert.equal(map.ownerOf(h), linear(h), `hash ${h}`);
});

test('ownerOf works for even splits of every size up to 64', () => {
  for (let n = 1; n <= 64; n++) {
    const ranges = owned(evenRanges(n));
    const map = new RangeMap('even', ranges);
    for (const r of ranges) {
      assert.equal(map.ownerOf(r.lo), r);
      assert.equal(map.ownerOf(r.hi), r);
    }
  }
});

test('a map refuses ranges that do not cover the space once, and hashes outside int8', () => {
  assert.throws(() => new RangeMap('bad', owned([{ lo: HASH_MIN, hi: 0n }])), CatalogInvalidError);
  assert.throws(() => new RangeMap('bad', []), /keyspace "bad" has no ranges/);
  const map = new RangeMap('ok', owned(evenRanges(3)));
  assert.throws(() => map.ownerOf(HASH_MAX + 1n), RangeError);
  assert.throws(() => map.ownerOf(HASH_MIN - 1n), RangeError);
});

test('the ranges of a map cannot be changed', () => {
  const map = new RangeMap('ok', owned(evenRanges(2)));
  assert.ok(Object.isFrozen(map.ranges));
  assert.throws(() => (map.ranges as Owned[]).push({ lo: 0n, hi: 0n, owner: 'x' }), TypeError);
});
