import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planTopology } from '../net/topology.js';
import { memberSpecs } from './layout.js';

const shape = { dataNodes: 2, coordinators: 2, routers: 2, movers: 1 };

test('without replicas the members are the nodes and the services', () => {
  assert.deepEqual(
    memberSpecs({ ...shape, replicas: 0 }).map((m) => `${m.name}:${m.kind}`),
    ['home:node', 'data1:node', 'data2:node']
      .concat(['coord0:coordinator', 'coord1:coordinator', 'router0:router', 'router1:router'])
      .concat(['mover0:mover']),
  );
});

test('with replicas every node has a replica member, itself a node with links to every member', () => {
  const specs = memberSpecs({ ...shape, replicas: 1 });
  assert.deepEqual(
    specs.filter((m) => m.kind === 'node').map((m) => m.name),
    ['home', 'data1', 'data2', 'homerep', 'data1rep', 'data2rep'],
  );
  const t = planTopology(specs, 7, 1234);
  const linked = (a: string, b: string) =>
    t.links.some((l) => (l.a === a && l.b === b) || (l.a === b && l.b === a));
  // A replica streams from its primary, and either may be the primary that routers, coordinators
  // and the mover reach after a failover.
  for (const peer of ['data1', 'router0', 'coord1', 'mover0', 'homerep', 'root'])
    assert.ok(linked('data1rep', peer), `data1rep - ${peer}`);
  assert.ok(!linked('router0', 'coord0'));
});
