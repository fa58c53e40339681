import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SOAK_ROOT } from '../entry.js';
import { PlanError, parsePlan, withOverrides } from './plan.js';

test('an empty plan gets every default', () => {
  const p = parsePlan({}, 'x');
  assert.equal(p.name, 'x');
  assert.equal(p.cluster.dataNodes, 2);
  assert.equal(p.cluster.network, 'auto');
  assert.ok(p.workload.mix['list-append'] > 0);
  assert.deepEqual(p.faults.kinds, []);
});

test('bad plans are refused with one sentence naming the field', () => {
  assert.throws(() => parsePlan({ seconds: -1 }, 'x'), /seconds must be a number of at least 1/);
  assert.throws(
    () => parsePlan({ cluster: { network: 'wifi' } }, 'x'),
    /cluster.network must be auto, netns or loopback/,
  );
  assert.throws(
    () => parsePlan({ workload: { mix: { 'list-apend': 1 } } }, 'x'),
    /unknown operation "list-apend"/,
  );
  assert.throws(() => parsePlan({ faults: { gapS: [5, 1] } }, 'x'), /low <= high/);
  assert.throws(() => parsePlan({ cluster: { nodes: 3 } }, 'x'), /unknown field "nodes"/);
  assert.throws(() => parsePlan({ faults: { kinds: [{ weight: 1 }] } }, 'x'), PlanError);
});

test('a fault entry keeps its own parameters', () => {
  const p = parsePlan(
    { faults: { kinds: [{ kind: 'kill-node', seconds: [1, 2], targets: ['data1'] }] } },
    'x',
  );
  assert.deepEqual(p.faults.kinds[0], {
    kind: 'kill-node',
    weight: 1,
    seconds: [1, 2],
    atMost: undefined,
    params: { targets: ['data1'] },
  });
});

test('--seconds and --seed override the file', () => {
  const p = withOverrides(parsePlan({ seconds: 600, seed: 3 }, 'x'), {
    seconds: 30,
    seed: undefined,
  });
  assert.equal(p.seconds, 30);
  assert.equal(p.seed, 3);
});

test('every plan in soak/plans parses', () => {
  const dir = join(SOAK_ROOT, 'plans');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json'))) {
    const p = parsePlan(JSON.parse(readFileSync(join(dir, f), 'utf8')), f);
    assert.ok(p.seconds > 0, f);
  }
});

test('a plan naming a mover fault kind gets a mover unless it says 0, which is refused', () => {
  assert.equal(parsePlan({}, 'x').cluster.movers, 0);
  const kinds = [{ kind: 'move', seconds: [20, 40] }];
  assert.equal(parsePlan({ faults: { kinds } }, 'x').cluster.movers, 1);
  assert.equal(parsePlan({ cluster: { movers: 2 }, faults: { kinds } }, 'x').cluster.movers, 2);
  assert.throws(
    () => parsePlan({ cluster: { movers: 0 }, faults: { kinds } }, 'x'),
    /need a mover: cluster.movers must be at least 1/,
  );
});

test('replicas: 0 by default, 1 on asking; more, or a failover kind without them, is refused', () => {
  assert.equal(parsePlan({}, 'x').cluster.replicas, 0);
  assert.equal(parsePlan({ cluster: { replicas: 1 } }, 'x').cluster.replicas, 1);
  assert.throws(
    () => parsePlan({ cluster: { replicas: 2 } }, 'x'),
    /cluster.replicas must be 0 or 1 .*not 2/,
  );
  assert.throws(() => parsePlan({ cluster: { replicas: 0.5 } }, 'x'), /whole number/);
  assert.throws(() => parsePlan({ cluster: { replicas: true } }, 'x'), /cluster.replicas/);
  for (const kind of ['failover-node', 'kill-replica', 'home-failover']) {
    const faults = { kinds: [{ kind, seconds: [5, 10] }] };
    assert.throws(
      () => parsePlan({ faults }, 'x'),
      new RegExp(`names ${kind}, which needs nodes with a replica: set cluster.replicas to 1`),
    );
    assert.equal(parsePlan({ cluster: { replicas: 1 }, faults }, 'x').cluster.replicas, 1);
  }
  // A kind given weight 0 is never drawn, so it needs nothing.
  const off = { kinds: [{ kind: 'failover-node', weight: 0 }] };
  assert.equal(parsePlan({ faults: { ...off, everyKind: false } }, 'x').cluster.replicas, 0);
});
