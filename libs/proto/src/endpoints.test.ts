// A client with a list of addresses finds the server that serves and follows it: real grpc-js
// servers on 127.0.0.1, one answering as a standby does (UNAVAILABLE, naming the active one).
import { test, after } from 'node:test';
import * as assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  ACTIVE_COORDINATOR_KEY,
  AgentService,
  CatalogService,
  Code,
  RpcError,
  STANDBY_KEY,
  addService,
  createClient,
  parseAddressList,
  type ServiceImpl,
} from './index.js';
import { startServer, type TestServer } from './testing.js';

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.stop();
});

/** A server that serves CatalogService while `state.active`, else refuses like a standby. */
async function coordinatorLike(name: string, state: { active: boolean; hint: string }) {
  let calls = 0;
  const s = await startServer((server) => {
    const authorize = (): void => {
      if (state.active) return;
      const md = new grpc.Metadata();
      md.set(STANDBY_KEY, '1');
      if (state.hint !== '') md.set(ACTIVE_COORDINATOR_KEY, state.hint);
      throw new RpcError(Code.UNAVAILABLE, `${name} is a standby`, md);
    };
    addService(
      server,
      CatalogService,
      {
        getCatalog: () => {
          calls++;
          return { clusterUid: name };
        },
        async *watchCatalog() {
          yield { clusterUid: name, epoch: 1n };
          yield { clusterUid: name, epoch: 2n };
        },
      },
      { authorize },
    );
    addService(
      server,
      AgentService,
      {
        async *report(reports) {
          for await (const r of reports) yield { action: 'lease', reason: `${name}:${r.node}` };
        },
        getHealth: () => ({}),
      } satisfies ServiceImpl<typeof AgentService>,
      { authorize },
    );
  });
  servers.push(s);
  return { ...s, calls: () => calls };
}

async function deadAddress(): Promise<string> {
  const s = await startServer(() => {});
  await s.stop();
  return s.address;
}

test('parseAddressList keeps order, drops duplicates and blanks, refuses a bad entry', () => {
  assert.deepEqual(parseAddressList(' a:1, b:2 ,a:1,'), ['a:1', 'b:2']);
  assert.throws(() => parseAddressList('a:1,b'), /"b" is not an address/);
  assert.throws(() => parseAddressList(' , '), /holds no address/);
});

test('a call to a standby goes on to the active one it names; a dead address is skipped', async () => {
  const bState = { active: true, hint: '' };
  const b = await coordinatorLike('b', bState);
  const aState = { active: false, hint: b.address };
  const a = await coordinatorLike('a', aState);
  const dead = await deadAddress();

  const client = createClient(CatalogService, `${dead},${a.address}`, { deadlineMs: 5_000 });
  try {
    assert.equal((await client.getCatalog({})).clusterUid, 'b');
    assert.equal(b.calls(), 1);
    assert.equal(a.calls(), 0, 'the standby never ran the call');
    // Later calls go straight to the one that answered.
    assert.equal((await client.getCatalog({})).clusterUid, 'b');
    const epochs: bigint[] = [];
    for await (const c of client.watchCatalog({})) epochs.push(c.epoch);
    assert.deepEqual(epochs, [1n, 2n]);

    // Another client sharing the connection shares where calls go.
    const agent = createClient(AgentService, `${dead},${a.address}`, {
      channel: client.grpcClient,
    });
    const s = agent.report();
    s.send({ node: 'd1' });
    s.end();
    const directives = [];
    for await (const d of s) directives.push(d.reason);
    assert.deepEqual(directives, ['b:d1']);
    agent.close(); // shared: must not close the client's connections
    assert.equal((await client.getCatalog({})).clusterUid, 'b');
  } finally {
    client.close();
  }
});

test('when the active one dies and the standby takes over, the client follows', async () => {
  const aState = { active: true, hint: '' };
  const a = await coordinatorLike('a', aState);
  const bState = { active: false, hint: a.address };
  const b = await coordinatorLike('b', bState);
  const client = createClient(CatalogService, [a.address, b.address], { deadlineMs: 5_000 });
  try {
    assert.equal((await client.getCatalog({})).clusterUid, 'a');
    await a.stop();
    // b still believes a is active for a moment: the client bounces between them, then fails.
    await assert.rejects(client.getCatalog({}), (e: unknown) => {
      assert.ok(e instanceof RpcError);
      assert.equal(e.code, Code.UNAVAILABLE);
      return true;
    });
    bState.active = true;
    assert.equal((await client.getCatalog({})).clusterUid, 'b');
  } finally {
    client.close();
  }
});

test('a failed stream moves the next one; a call that ran is never sent twice', async () => {
  const bState = { active: true, hint: '' };
  const b = await coordinatorLike('b', bState);
  const aState = { active: false, hint: b.address };
  const a = await coordinatorLike('a', aState);
  const agent = createClient(AgentService, [a.address, b.address]);
  try {
    const first = agent.report();
    first.send({ node: 'd1' });
    await assert.rejects(
      (async () => {
        for await (const _ of first) assert.fail('a standby sends no directive');
      })(),
      (e: unknown) => e instanceof RpcError && e.code === Code.UNAVAILABLE,
    );
    const second = agent.report();
    second.send({ node: 'd1' });
    second.end();
    const got = [];
    for await (const d of second) got.push(d.reason);
    assert.deepEqual(got, ['b:d1']);
  } finally {
    agent.close();
  }

  let ran = 0;
  const failing = await startServer((server) =>
    addService(server, CatalogService, {
      getCatalog: () => {
        ran++;
        throw new RpcError(Code.UNAVAILABLE, 'the catalog database is unreachable; retry shortly');
      },
      async *watchCatalog() {},
    }),
  );
  servers.push(failing);
  const client = createClient(CatalogService, [failing.address, b.address]);
  try {
    await assert.rejects(client.getCatalog({}), /catalog database is unreachable/);
    assert.equal(ran, 1);
    assert.equal(b.calls(), 0, 'not sent again elsewhere');
  } finally {
    client.close();
  }
});
