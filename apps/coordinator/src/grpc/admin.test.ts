// AdminService and CatalogService end to end: a real coordinator over a real catalog database,
// called through real gRPC clients. Concurrency, the watch stream, refusals, and bad input.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { HASH_MAX, HASH_MIN } from '@tessera/keyspace';
import { Code, KeyType, NodeRole, NodeState, RpcError, type Catalog } from '@tessera/proto';
import {
  clientsFor,
  freshDatabase,
  startPostgres,
  startTestCoordinator,
  type PgServer,
  type TestCoordinator,
} from '../testing.js';

let server: PgServer;
let t: TestCoordinator;
before(async () => {
  server = await startPostgres({ name: 'admin' });
  t = await startTestCoordinator(await freshDatabase(server));
  await t.admin.addNode({ name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME });
  await t.admin.addNode({ name: 'data-b', host: '127.0.0.1', port: 5434 });
  await t.admin.addNode({ name: 'data-a', host: '127.0.0.1', port: 5433 });
});
after(async () => {
  await t.stop();
  await server.dispose();
});

function rejectsWith(p: Promise<unknown>, code: Code, message: RegExp): Promise<void> {
  return assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof RpcError, String(e));
    assert.equal(Code[e.code], Code[code], e.message);
    assert.match(e.message, message);
    return true;
  });
}

test('a new keyspace is split evenly and owned round-robin by the active data nodes in name order', async () => {
  await t.admin.createKeyspace({ name: 'orders', keyType: KeyType.BIGINT, ranges: 4, seed: 7n });
  const c = await t.catalog.getCatalog({});
  const ranges = c.ranges.filter((r) => r.keyspace === 'orders');
  assert.deepEqual(
    ranges.map((r) => r.owner),
    ['data-a', 'data-b', 'data-a', 'data-b'],
  );
  assert.equal(ranges[0]!.lo, HASH_MIN);
  assert.equal(ranges[3]!.hi, HASH_MAX);
  assert.deepEqual(
    c.keyspaces.find((k) => k.name === 'orders'),
    { ...c.keyspaces.find((k) => k.name === 'orders')!, keyType: KeyType.BIGINT, seed: 7n },
  );
  assert.deepEqual(
    c.nodes.map((n) => [n.name, n.state]),
    [
      ['data-a', NodeState.ACTIVE],
      ['data-b', NodeState.ACTIVE],
      ['home', NodeState.ACTIVE],
    ],
  );
});

test('50 concurrent changes from several clients all land, each with its own epoch', async () => {
  await t.admin.createKeyspace({ name: 'busy', keyType: KeyType.TEXT, ranges: 1 });
  const start = (await t.catalog.getCatalog({})).epoch;
  const clients = Array.from({ length: 5 }, () => clientsFor(t.coordinator.address));
  try {
    const calls = Array.from({ length: 50 }, (_, i) => {
      const c = clients[i % clients.length]!;
      // Every split names the same lo: whichever order they commit in, each halves the first range again.
      return i % 2 === 0
        ? c.admin.distributeTable({
            schema: 'public',
            name: `t${i}`,
            keyColumn: 'id',
            keyspace: 'busy',
          })
        : c.admin.splitRange({ keyspace: 'busy', lo: HASH_MIN });
    });
    const epochs = (await Promise.all(calls)).map((r) => r.epoch);
    assert.equal(new Set(epochs).size, 50, 'epochs are distinct');
    const sorted = [...epochs].sort((a, b) => (a < b ? -1 : 1));
    assert.deepEqual(
      sorted,
      Array.from({ length: 50 }, (_, i) => start + 1n + BigInt(i)),
    );
    const c = await t.catalog.getCatalog({});
    assert.equal(c.epoch, start + 50n);
    assert.equal(c.ranges.filter((r) => r.keyspace === 'busy').length, 26);
    assert.equal(c.tables.filter((x) => x.keyspace === 'busy').length, 25);
  } finally {
    for (const c of clients) c.close();
  }
});

test('a watcher from epoch 0 sees every epoch exactly once, in order, while 100 changes happen', async () => {
  const start = (await t.catalog.getCatalog({})).epoch;
  const seen: Catalog[] = [];
  const ac = new AbortController();
  const watching = (async () => {
    try {
      for await (const c of t.catalog.watchCatalog({ afterEpoch: 0n }, { signal: ac.signal })) {
        seen.push(c);
        if (c.epoch === start + 100n) break;
      }
    } finally {
      ac.abort();
    }
  })();
  // Three writers at once, so commits race each other.
  await Promise.all(
    [0, 1, 2].map(async (w) => {
      for (let i = w; i < 100; i += 3) {
        await t.admin.referenceTable({ schema: 'watched', name: `r${i}` });
      }
    }),
  );
  await watching;
  assert.ok(seen[0]!.epoch <= start, 'the current snapshot first');
  const epochs = seen.map((c) => c.epoch);
  for (let i = 1; i < epochs.length; i++)
    assert.equal(epochs[i], epochs[i - 1]! + 1n, `epoch after ${epochs[i - 1]}`);
  assert.equal(epochs.at(-1), start + 100n);
  // Each snapshot is the state at its own epoch: one more declared table each time.
  const counts = seen.map((c) => c.tables.filter((x) => x.schema === 'watched').length);
  assert.deepEqual(
    counts.slice(-100),
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
});

test('a split outside (lo, hi] and merges of non-adjacent or differently owned ranges are refused, changing nothing', async () => {
  await t.admin.createKeyspace({ name: 'solid', keyType: KeyType.INT, ranges: 2 });
  const before = await t.catalog.getCatalog({});
  const first = before.ranges.find((r) => r.keyspace === 'solid' && r.lo === HASH_MIN)!;
  await rejectsWith(
    t.admin.splitRange({ keyspace: 'solid', lo: HASH_MIN, at: HASH_MIN }),
    Code.INVALID_ARGUMENT,
    /split point .* is outside range/,
  );
  await rejectsWith(
    t.admin.splitRange({ keyspace: 'solid', lo: HASH_MIN, at: first.hi + 1n }),
    Code.INVALID_ARGUMENT,
    /lo < at <= hi/,
  );
  const last = before.ranges.filter((r) => r.keyspace === 'solid').at(-1)!;
  await rejectsWith(
    t.admin.mergeRanges({ keyspace: 'solid', lo: last.lo }),
    Code.FAILED_PRECONDITION,
    /last range; there is no adjacent range/,
  );
  await rejectsWith(
    t.admin.mergeRanges({ keyspace: 'solid', lo: HASH_MIN }),
    Code.FAILED_PRECONDITION,
    /different owners/,
  );
  const after = await t.catalog.getCatalog({});
  assert.equal(after.epoch, before.epoch);
  assert.deepEqual(after.ranges, before.ranges);

  // The good paths: split at a chosen point, move, merge back.
  await t.admin.splitRange({ keyspace: 'solid', lo: HASH_MIN, at: -100n });
  await t.admin.setRangeOwner({ keyspace: 'solid', lo: last.lo, owner: 'data-a' });
  await t.admin.mergeRanges({ keyspace: 'solid', lo: -100n });
  await t.admin.mergeRanges({ keyspace: 'solid', lo: HASH_MIN });
  const merged = (await t.catalog.getCatalog({})).ranges.filter((r) => r.keyspace === 'solid');
  assert.deepEqual(
    merged.map((r) => [r.lo, r.hi, r.owner]),
    [[HASH_MIN, HASH_MAX, 'data-a']],
  );
});

test('bad input gets a status and a sentence, and the server keeps serving', async () => {
  const epoch = (await t.catalog.getCatalog({})).epoch;
  await rejectsWith(
    t.admin.removeNode({ name: 'nobody' }),
    Code.NOT_FOUND,
    /^no node named nobody$/,
  );
  await rejectsWith(
    t.admin.setRangeOwner({ keyspace: 'orders', lo: HASH_MIN, owner: 'nobody' }),
    Code.NOT_FOUND,
    /no node named nobody/,
  );
  await rejectsWith(
    t.admin.addNode({ name: 'home', host: '10.0.0.1', port: 5432 }),
    Code.ALREADY_EXISTS,
    /node home already exists/,
  );
  await rejectsWith(
    t.admin.addNode({ name: 'other', host: '127.0.0.1', port: 5433 }),
    Code.ALREADY_EXISTS,
    /already has the address 127.0.0.1:5433/,
  );
  await rejectsWith(
    t.admin.addNode({ name: 'home2', host: '127.0.0.1', port: 6000, role: NodeRole.HOME }),
    Code.FAILED_PRECONDITION,
    /already the home node/,
  );
  await rejectsWith(
    t.admin.createKeyspace({ name: 'orders', keyType: KeyType.BIGINT }),
    Code.ALREADY_EXISTS,
    /keyspace orders already exists/,
  );
  await rejectsWith(
    t.admin.distributeTable({ name: 't0', keyColumn: 'id', keyspace: 'busy' }),
    Code.ALREADY_EXISTS,
    /public.t0 is already declared/,
  );
  await rejectsWith(
    t.admin.splitRange({ keyspace: 'orders', lo: 12345n }),
    Code.NOT_FOUND,
    /^no range of keyspace orders starts at 12345$/,
  );
  await rejectsWith(
    t.admin.splitRange({ keyspace: 'nope', lo: HASH_MIN }),
    Code.NOT_FOUND,
    /no keyspace named nope/,
  );
  await rejectsWith(
    t.admin.createKeyspace({ name: 'x', keyType: KeyType.UNSPECIFIED }),
    Code.INVALID_ARGUMENT,
    /supported key types are bigint/,
  );
  await rejectsWith(
    t.admin.createKeyspace({ name: 'x', keyType: 42 as KeyType }),
    Code.INVALID_ARGUMENT,
    /key type 42/,
  );
  await rejectsWith(
    t.admin.createKeyspace({ name: 'x', keyType: KeyType.UUID, ranges: 5000 }),
    Code.INVALID_ARGUMENT,
    /1 to 4096 ranges/,
  );
  await rejectsWith(
    t.admin.addNode({ name: '', host: 'h', port: 1 }),
    Code.INVALID_ARGUMENT,
    /node name must not be empty/,
  );
  await rejectsWith(
    t.admin.addNode({ name: 'x'.repeat(64), host: 'h', port: 1 }),
    Code.INVALID_ARGUMENT,
    /longer than 63 bytes/,
  );
  await rejectsWith(
    t.admin.addNode({ name: 'p', host: 'h', port: 70000 }),
    Code.INVALID_ARGUMENT,
    /port must be between 1 and 65535/,
  );
  await rejectsWith(
    t.admin.createKeyspace({ name: '', keyType: KeyType.TEXT }),
    Code.INVALID_ARGUMENT,
    /keyspace name must not be empty/,
  );
  await rejectsWith(
    t.admin.distributeTable({ name: 'y', keyColumn: '', keyspace: 'orders' }),
    Code.INVALID_ARGUMENT,
    /key column must not be empty/,
  );
  await rejectsWith(
    t.admin.distributeTable({ name: 'y', keyColumn: 'id', keyspace: 'nope' }),
    Code.NOT_FOUND,
    /no keyspace named nope/,
  );
  await rejectsWith(
    t.admin.dropTable({ name: 'never' }),
    Code.NOT_FOUND,
    /public.never is not declared/,
  );
  await rejectsWith(
    t.admin.setRangeState({ keyspace: 'orders', lo: HASH_MIN, state: 0 }),
    Code.INVALID_ARGUMENT,
    /range state 0/,
  );
  await rejectsWith(
    t.admin.addNode({ name: 'nul', host: 'a\0b', port: 1 }),
    Code.INVALID_ARGUMENT,
    /value the catalog cannot store/,
  );
  await rejectsWith(
    t.admin.removeNode({ name: 'data-b' }),
    Code.FAILED_PRECONDITION,
    /still owns \d+ range\(s\)/,
  );
  await rejectsWith(
    t.admin.removeNode({ name: 'home' }),
    Code.FAILED_PRECONDITION,
    /home node and cannot be removed/,
  );
  const c = await t.catalog.getCatalog({});
  assert.equal(c.epoch, epoch, 'no refused change created an epoch');

  // And still serving: a node without ranges can go.
  const added = await t.admin.addNode({ name: 'spare', host: '127.0.0.1', port: 5999 });
  const removed = await t.admin.removeNode({ name: 'spare' });
  assert.equal(removed.epoch, added.epoch + 1n);
  await t.admin.dropTable({ name: 't0' });
});

test('a keyspace in a cluster with only a home node is owned by it; with no nodes it is refused', async () => {
  const solo = await startTestCoordinator(await freshDatabase(server));
  try {
    await rejectsWith(
      solo.admin.createKeyspace({ name: 'k', keyType: KeyType.UUID }),
      Code.FAILED_PRECONDITION,
      /no nodes to own the ranges/,
    );
    await solo.admin.addNode({ name: 'h', host: '127.0.0.1', port: 1, role: NodeRole.HOME });
    await solo.admin.createKeyspace({ name: 'k', keyType: KeyType.UUID, ranges: 3 });
    const c = await solo.catalog.getCatalog({});
    assert.deepEqual(
      c.ranges.map((r) => r.owner),
      ['h', 'h', 'h'],
    );
    assert.equal(c.epoch, 3n);
  } finally {
    await solo.stop();
  }
});
