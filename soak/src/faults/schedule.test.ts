import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SOAK_ROOT } from '../entry.js';
import { parsePlan } from '../plan/plan.js';
import { Rng } from '../rng.js';
import type { ClusterShape } from './fault.js';
import { FAULT_KINDS } from './registry.js';
import { drawSchedule } from './schedule.js';

const shape = (netns: boolean): ClusterShape => ({
  nodes: [
    { name: 'home', role: 'home' },
    { name: 'data1', role: 'data' },
    { name: 'data2', role: 'data' },
  ],
  coordinators: ['coord0', 'coord1'],
  routers: ['router0', 'router1'],
  netns,
  linkProxy: true,
  replicas: true,
});

const allKinds = parsePlan(
  {
    seconds: 600,
    cluster: { replicas: 1 },
    faults: { kinds: FAULT_KINDS.map((k) => ({ kind: k.name, seconds: [1, 3] })) },
  },
  't',
);

test('the same seed draws the same schedule; another seed another one', () => {
  const a = drawSchedule(allKinds.faults, 600, shape(true), new Rng(7).fork('faults'));
  const b = drawSchedule(allKinds.faults, 600, shape(true), new Rng(7).fork('faults'));
  const c = drawSchedule(allKinds.faults, 600, shape(true), new Rng(8).fork('faults'));
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.items, c.items);
});

test('with everyKind, each kind comes once before any comes twice', () => {
  const s = drawSchedule(allKinds.faults, 600, shape(true), new Rng(1));
  const first = s.items.slice(0, FAULT_KINDS.length).map((i) => i.kind);
  assert.deepEqual([...first].sort(), FAULT_KINDS.map((k) => k.name).sort());
  for (const i of s.items) {
    assert.ok(i.seconds >= 1 && i.seconds <= 3);
    assert.ok(i.target.length > 0);
  }
});

test('partitions are skipped on loopback, with the reason', () => {
  const s = drawSchedule(allKinds.faults, 600, shape(false), new Rng(1));
  assert.ok(!s.items.some((i) => i.kind === 'partition-node'));
  assert.deepEqual(s.skipped, [
    { kind: 'partition-node', reason: 'needs network namespaces (this run is on loopback)' },
  ]);
});

test('the replica kinds are skipped without replicas; failovers strike the node they name', () => {
  const kinds = ['failover-node', 'kill-replica', 'home-failover'].map((kind) => ({
    kind,
    seconds: [5, 10],
  }));
  const p = parsePlan({ cluster: { replicas: 1 }, faults: { kinds } }, 't');
  const none = drawSchedule(p.faults, 600, { ...shape(true), replicas: false }, new Rng(1));
  assert.deepEqual(none.items, []);
  assert.deepEqual(
    none.skipped.map((x) => x.reason),
    ['needs cluster.replicas', 'needs cluster.replicas', 'needs cluster.replicas'],
  );
  const s = drawSchedule(p.faults, 600, shape(true), new Rng(1));
  const targets = (kind: string) =>
    new Set(s.items.filter((i) => i.kind === kind).map((i) => i.target));
  assert.deepEqual([...targets('failover-node')].sort(), ['data1', 'data2']);
  assert.deepEqual([...targets('home-failover')], ['home']);
  assert.deepEqual([...targets('kill-replica')].sort(), ['data1', 'data2', 'home']);
});

test('targets from the plan limit the draw', () => {
  const p = parsePlan({ faults: { kinds: [{ kind: 'kill-node', targets: ['data2'] }] } }, 't');
  const s = drawSchedule(p.faults, 100, shape(true), new Rng(3));
  assert.ok(s.items.length > 3);
  assert.ok(s.items.every((i) => i.target === 'data2'));
});

test('an unknown fault kind is refused', () => {
  const p = parsePlan({ faults: { kinds: [{ kind: 'kill-everything' }] } }, 't');
  assert.throws(
    () => drawSchedule(p.faults, 100, shape(true), new Rng(3)),
    /unknown fault kind "kill-everything"/,
  );
});

test('the ci plan has at least 7 fault kinds it can run here', () => {
  const plan = parsePlan(
    JSON.parse(readFileSync(join(SOAK_ROOT, 'plans', 'ci.json'), 'utf8')),
    'ci',
  );
  const s = drawSchedule(plan.faults, plan.seconds, shape(true), new Rng(plan.seed).fork('faults'));
  assert.ok(new Set(s.items.map((i) => i.kind)).size >= 7);
  assert.ok(plan.seconds >= 8 * 60 - 60 && plan.seconds <= 10 * 60);
});

test('faults.first opens the schedule in its order, then the seeded draw goes on', () => {
  const p = parsePlan(
    {
      faults: {
        first: ['move', 'kill-node'],
        kinds: [
          { kind: 'kill-router', seconds: [1, 2] },
          { kind: 'kill-node', seconds: [1, 2] },
          { kind: 'move', seconds: [10, 20] },
        ],
      },
    },
    't',
  );
  for (const seed of [1, 2, 3]) {
    const s = drawSchedule(p.faults, 300, shape(true), new Rng(seed));
    assert.deepEqual(
      s.items.slice(0, 2).map((i) => i.kind),
      ['move', 'kill-node'],
    );
    assert.deepEqual([...new Set(s.items.slice(2, 5).map((i) => i.kind))].sort(), [
      'kill-node',
      'kill-router',
      'move',
    ]);
  }
  assert.throws(
    () => parsePlan({ faults: { first: ['move'], kinds: [{ kind: 'kill-node' }] } }, 't'),
    /faults.first names "move", which faults.kinds does not list/,
  );
});

test('a kind with atMost is drawn no more often than that; the others fill the run', () => {
  const plan = parsePlan(
    {
      seconds: 3600,
      cluster: { replicas: 1 },
      faults: {
        first: ['kill-coordinator'],
        kinds: [
          { kind: 'kill-coordinator', seconds: [1, 3], atMost: 1 },
          { kind: 'kill-router', seconds: [1, 3], atMost: 2 },
          { kind: 'restart-node', seconds: [1, 3] },
        ],
      },
    },
    't',
  );
  const s = drawSchedule(plan.faults, 3600, shape(true), new Rng(3));
  const count = (k: string) => s.items.filter((i) => i.kind === k).length;
  assert.equal(s.items[0]!.kind, 'kill-coordinator');
  assert.equal(count('kill-coordinator'), 1);
  assert.equal(count('kill-router'), 2);
  assert.ok(count('restart-node') > 100);
  assert.throws(
    () => parsePlan({ faults: { kinds: [{ kind: 'kill-router', atMost: 0 }] } }, 't'),
    /atMost must be a number of at least 1/,
  );
});
