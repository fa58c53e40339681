import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  healBatch,
  parseNamespaceName,
  partitionBatch,
  peersOf,
  pickSubnet,
  planTopology,
  setupBatches,
} from './topology.js';

const t = planTopology(
  [
    { name: 'home', kind: 'node' },
    { name: 'data1', kind: 'node' },
    { name: 'coord0', kind: 'coordinator' },
    { name: 'router0', kind: 'router' },
  ],
  42,
  1234,
);

test('every member has its own namespace and address; the harness has .1', () => {
  assert.equal(t.rootAddress, '10.213.42.1');
  assert.deepEqual(
    t.members.map((m) => [m.name, m.ns, m.address]),
    [
      ['home', 'tsoak-42-1234-home', '10.213.42.10'],
      ['data1', 'tsoak-42-1234-data1', '10.213.42.11'],
      ['coord0', 'tsoak-42-1234-coord0', '10.213.42.12'],
      ['router0', 'tsoak-42-1234-router0', '10.213.42.13'],
    ],
  );
  assert.deepEqual(parseNamespaceName('tsoak-42-1234-coord0'), {
    subnet: 42,
    owner: 1234,
    member: 'coord0',
  });
  assert.equal(parseNamespaceName('somebody-else'), undefined);
});

test('links: the harness to everyone, and every pair that includes a node; never router to coordinator', () => {
  assert.deepEqual(peersOf(t, 'router0').sort(), ['data1', 'home', 'root']);
  assert.deepEqual(peersOf(t, 'home').sort(), ['coord0', 'data1', 'root', 'router0']);
  for (const l of t.links) for (const name of [l.ifA, l.ifB]) assert.ok(name.length <= 15, name);
});

test('setup makes each veth pair once, and a /32 route per peer on each end', () => {
  const batches = setupBatches(t);
  const root = batches.find(
    (b) => b.ns === undefined && b.lines.some((l) => l.startsWith('link add')),
  )!;
  assert.equal(root.lines.length, t.links.length);
  const router = batches.find((b) => b.ns === 'tsoak-42-1234-router0')!;
  assert.ok(router.lines.includes('addr add 10.213.42.13/32 dev lo'));
  assert.ok(router.lines.includes('route add 10.213.42.10/32 dev t-home src 10.213.42.13'));
  assert.ok(router.lines.includes('route add 10.213.42.1/32 dev t-root src 10.213.42.13'));
});

test('a partition takes the node’s ends down; the heal brings them up and restores the routes', () => {
  assert.deepEqual(partitionBatch(t, 'home', ['router0']), {
    ns: 'tsoak-42-1234-home',
    lines: ['link set t-router0 down'],
  });
  assert.deepEqual(healBatch(t, 'home', ['router0']).lines, [
    'link set t-router0 up',
    'route replace 10.213.42.13/32 dev t-router0 src 10.213.42.10',
  ]);
});

test('a subnet no live run uses', () => {
  assert.equal(pickSubnet(41, new Set()), 42);
  assert.equal(pickSubnet(41, new Set([42, 43])), 44);
});
