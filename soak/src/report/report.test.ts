import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpRecord } from '../workload/runner.js';
import { RecoveryTracker, affected } from './recovery.js';
import { summarize } from './rss.js';
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

test('rss growth is the slope over the longest lifetime after warm-up, per hour', () => {
  const samples = [];
  for (let s = 0; s <= 600; s += 10)
    samples.push({ s, name: 'router0', kind: 'router', pid: 1, kb: 100_000 + s * 10 });
  samples.push({ s: 610, name: 'router0', kind: 'router', pid: 2, kb: 50_000 });
  const [r] = summarize(samples, 60);
  assert.equal(r!.lifetimes, 2);
  // 10 kB/s = 36,000 kB/h over a mean of about 103,300 kB
  assert.ok(r!.growthPctPerHour! > 30 && r!.growthPctPerHour! < 40, String(r!.growthPctPerHour));
  const [flat] = summarize([{ s: 0, name: 'x', kind: 'router', pid: 1, kb: 1 }], 0);
  assert.equal(flat!.growthPctPerHour, undefined);
});
