import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpRecord } from '../workload/runner.js';
import { RecoveryTracker, affected } from './recovery.js';
import { summarize } from './growth.js';
import { memorySection } from './markdown.js';
import type { RssSample } from './rss.js';
import { Timeline, quantile } from './timeline.js';

const op = (o: Partial<OpRecord>): OpRecord => ({
  kind: 'list-append',
  outcome: 'ok',
  invokeNs: 0,
  completeNs: 1e6,
  writes: true,
  nodes: ['data1'],
  via: 'router0',
  ...o,
});

test('recovery: the first acknowledged write on the affected node invoked after the start, and after the heal', () => {
  const r = new RecoveryTracker();
  r.start(1, { nodes: ['data1'] }, 10e9);
  r.record(op({ invokeNs: 9e9, completeNs: 12e9 })); // invoked before the fault
  r.record(op({ invokeNs: 11e9, completeNs: 13e9, nodes: ['data2'] })); // another node
  r.record(op({ invokeNs: 11e9, completeNs: 14e9, outcome: 'info' }));
  r.record(op({ invokeNs: 11e9, completeNs: 15e9, writes: false }));
  r.end(1, 16e9);
  r.record(op({ invokeNs: 15.5e9, completeNs: 17e9 }));
  r.record(op({ invokeNs: 16.5e9, completeNs: 18e9 }));
  assert.deepEqual(r.results.get(1), { id: 1, recoveryS: 7, afterHealS: 2 });
});

test('what a fault affects: its nodes, its router, or any write across nodes', () => {
  assert.ok(affected({ via: ['router1'] }, { nodes: ['data1'], via: 'router1' }));
  assert.ok(!affected({ via: ['router1'] }, { nodes: ['data1'], via: 'router0' }));
  assert.ok(affected({ crossNode: true }, { nodes: ['data1', 'data2'], via: 'router0' }));
  assert.ok(!affected({ crossNode: true }, { nodes: ['data1'], via: 'router0' }));
  assert.ok(
    affected({ via: ['router1'], crossNode: true }, { nodes: ['data1', 'data2'], via: 'router1' }),
  );
  assert.ok(
    !affected({ via: ['router1'], crossNode: true }, { nodes: ['data1', 'data2'], via: 'router0' }),
  );
  assert.ok(!affected({}, { nodes: ['data1'], via: 'router0' }));
});

test('timeline: counts per second by outcome, latency percentiles of ok operations', () => {
  const t = new Timeline();
  for (let i = 0; i < 100; i++) t.record(op({ invokeNs: 1e9, completeNs: 1e9 + (i + 1) * 1e6 }));
  t.record(op({ outcome: 'fail', completeNs: 2.5e9 }));
  assert.deepEqual(t.seconds()[1], { s: 1, ok: 100, fail: 0, info: 0 });
  assert.deepEqual(t.seconds()[2], { s: 2, ok: 0, fail: 1, info: 0 });
  const [b] = t.latency();
  assert.equal(b!.n, 100);
  assert.equal(b!.p99Ms, 99);
  assert.equal(quantile([], 0.99), 0);
});

const sample = (s: number, anonKb: number, o: Partial<RssSample> = {}): RssSample => ({
  s,
  name: 'router0',
  kind: 'router',
  pid: 1,
  kb: anonKb + 40_000,
  anonKb,
  shmemKb: 0,
  processes: 1,
  ...o,
});

const RULE = { warmupS: 60, minSpanS: 300 };

test('memory growth is the slope of anonymous memory over the longest lifetime after warm-up, per hour', () => {
  const samples: RssSample[] = [];
  // Warm-up: a steep rise that must not count; then 10 kB/s.
  for (let s = 0; s < 60; s += 10) samples.push(sample(s, 50_000 + s * 1000));
  for (let s = 60; s <= 600; s += 10) samples.push(sample(s, 100_000 + s * 10));
  samples.push(sample(610, 50_000, { pid: 2 }));
  const [r] = summarize(samples, RULE);
  assert.equal(r!.lifetimes, 2);
  assert.equal(r!.measure, 'anonymous RSS');
  // 10 kB/s = 36,000 kB/h over a mean of about 103,300 kB; a steady rise: the later half alike
  assert.ok(r!.growthPctPerHour! > 33 && r!.growthPctPerHour! < 36, String(r!.growthPctPerHour));
  assert.ok(Math.abs(r!.lateHalfPctPerHour! - r!.growthPctPerHour!) < 2);
  assert.equal(r!.notJudgedPctPerHour, undefined);
  assert.match(r!.note, /55 samples over 540 s after warm-up \(longest lifetime 600 s\)/);
});

test('a warm-up tail shows as a later half growing less than the whole', () => {
  const samples: RssSample[] = [];
  for (let s = 0; s <= 1200; s += 10)
    samples.push(sample(s, 100_000 + 20_000 * (1 - Math.exp(-s / 200))));
  const [r] = summarize(samples, RULE);
  assert.ok(r!.growthPctPerHour! > 5 * r!.lateHalfPctPerHour!, JSON.stringify(r));
});

test('a lifetime shorter than warm-up plus the least span is not judged, and says its slope', () => {
  const samples: RssSample[] = [];
  for (let s = 0; s <= 300; s += 10) samples.push(sample(s, 100_000 + s * 10));
  const [r] = summarize(samples, RULE);
  assert.equal(r!.growthPctPerHour, undefined);
  assert.equal(r!.lateHalfPctPerHour, undefined);
  assert.ok(r!.notJudgedPctPerHour! > 30, String(r!.notJudgedPctPerHour));
  assert.match(r!.note, /^not judged: longest lifetime 300 s, 240 s after warm-up, under 300 s/);
  const [one] = summarize([sample(0, 1)], RULE);
  assert.equal(one!.growthPctPerHour, undefined);
  assert.equal(one!.notJudgedPctPerHour, undefined);
});

test('a Postgres node is judged per process: more backends are not growth, fatter ones are', () => {
  const pg = (s: number, processes: number, perProcessKb: number, shmemKb: number): RssSample =>
    sample(s, processes * perProcessKb, {
      name: 'data1',
      kind: 'postgres',
      kb: processes * perProcessKb + shmemKb,
      shmemKb,
      processes,
    });
  const more: RssSample[] = [];
  const fatter: RssSample[] = [];
  for (let s = 0; s <= 900; s += 10) {
    // Backends come and go with the connections; shared buffers fill up.
    more.push(pg(s, 20 + ((s / 10) % 20), 1_500, 30_000 + s * 20));
    fatter.push(pg(s, 30, 1_500 + s, 30_000));
  }
  const [m] = summarize(more, RULE);
  assert.equal(m!.measure, 'anonymous Pss per process');
  assert.equal(m!.growthPctPerHour, 0);
  assert.deepEqual(m!.parts, { processes: [20, 30], anonMb: [29.3, 43.9], shmemMb: [29.3, 46.9] });
  const [f] = summarize(fatter, RULE);
  assert.ok(f!.growthPctPerHour! > 100, String(f!.growthPctPerHour));
});

test('the memory section says what is not judged and why, and splits a Postgres node', () => {
  const samples: RssSample[] = [];
  for (let s = 0; s <= 300; s += 10) {
    samples.push(sample(s, 100_000 + s * 10));
    samples.push(
      sample(s, 30_000, {
        name: 'data1',
        kind: 'postgres',
        pid: 7,
        shmemKb: 20_000,
        processes: 20,
      }),
    );
  }
  const text = memorySection({ samples, rule: RULE, summary: summarize(samples, RULE) }).join('\n');
  assert.match(text, /without its first 60 s \(warm-up\), judged only when at least 300 s remain/);
  assert.match(
    text,
    /\| router0 \| router \| 31 \| 1 \| .* \| anonymous RSS \| n\/a \| n\/a \| not judged: longest lifetime 300 s, 240 s after warm-up, under 300 s \(its slope there: [0-9.]+ %\/h\) \|/,
  );
  assert.match(text, /\| data1 \| 20 -> 20 \| 29.3 -> 29.3 \| 19.5 -> 19.5 \|/);
});
