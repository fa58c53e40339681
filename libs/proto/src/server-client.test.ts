// The adapter end to end: a real grpc-js server and our client over 127.0.0.1.
import { test, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  AgentService,
  CatalogService,
  Code,
  GetCatalogRequestSchema,
  NodeRole,
  RpcError,
  addService,
  createClient,
  type CallContext,
  type CallInfo,
  type ServiceImpl,
} from './index.js';
import { startServer, type TestServer } from './testing.js';

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.stop();
});

async function serveCatalog(
  impl: Partial<ServiceImpl<typeof CatalogService>>,
  opts?: Parameters<typeof addService>[3],
): Promise<string> {
  const s = await startServer((server) =>
    addService(server, CatalogService, impl as ServiceImpl<typeof CatalogService>, opts),
  );
  servers.push(s);
  return s.address;
}

function rejectsWith(code: Code, message?: RegExp): (e: unknown) => boolean {
  return (e) => {
    assert.ok(e instanceof RpcError, `expected RpcError, got ${String(e)}`);
    assert.equal(Code[e.code], Code[code]);
    if (message) assert.match(e.details, message);
    return true;
  };
}

test('unary round trip carries messages, bigint fields, the token, and reports the call', async () => {
  const calls: CallInfo[] = [];
  let seen: CallContext | undefined;
  const address = await serveCatalog(
    {
      getCatalog: (_req, ctx) => {
        seen = ctx;
        return {
          epoch: 7n,
          clusterUid: 'c1',
          nodes: [{ name: 'home', host: 'h', port: 5432, role: NodeRole.HOME }],
        };
      },
    },
    { onCallEnd: (i) => calls.push(i) },
  );
  const client = createClient(CatalogService, address, { token: 's3cret' });
  try {
    const cat = await client.getCatalog({});
    assert.equal(cat.$typeName, 'tessera.v1.Catalog');
    assert.equal(cat.epoch, 7n);
    assert.equal(cat.nodes[0]?.role, NodeRole.HOME);
    assert.deepEqual(seen?.metadata.get('authorization'), ['Bearer s3cret']);
    assert.equal(seen?.method, 'GetCatalog');
    assert.equal(seen?.service, 'tessera.v1.CatalogService');
    assert.match(seen?.peer ?? '', /127\.0\.0\.1/);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.code, 'OK');
    assert.equal(calls[0]?.method, 'GetCatalog');
    assert.ok((calls[0]?.seconds ?? -1) >= 0);
  } finally {
    client.close();
  }
});

test('a server stream delivers every item in order (backpressure) and ends', async () => {
  const address = await serveCatalog({
    async *watchCatalog(req) {
      for (let i = 1n; i <= 3000n; i++)
        yield { epoch: req.afterEpoch + i, clusterUid: 'x'.repeat(200) };
    },
  });
  const client = createClient(CatalogService, address);
  try {
    let expect = 11n;
    for await (const c of client.watchCatalog({ afterEpoch: 10n })) {
      assert.equal(c.epoch, expect++);
      if (expect % 500n === 0n) await sleep(1);
    }
    assert.equal(expect, 3011n);
  } finally {
    client.close();
  }
});

test('breaking out of a server stream cancels it: the handler sees ctx.signal aborted and its finally runs', async () => {
  const calls: CallInfo[] = [];
  let aborted!: () => void;
  const sawAbort = new Promise<void>((r) => (aborted = r));
  let cleanedUp!: () => void;
  const finallyRan = new Promise<void>((r) => (cleanedUp = r));
  const address = await serveCatalog(
    {
      async *watchCatalog(_req, ctx) {
        ctx.signal.addEventListener('abort', () => aborted());
        try {
          let epoch = 0n;
          while (true) {
            yield { epoch: ++epoch };
            await sleep(2);
          }
        } finally {
          cleanedUp();
        }
      },
    },
    { onCallEnd: (i) => calls.push(i) },
  );
  const client = createClient(CatalogService, address);
  try {
    let n = 0;
    for await (const c of client.watchCatalog({})) {
      assert.equal(c.epoch, BigInt(++n));
      if (n === 3) break;
    }
    await sawAbort;
    await finallyRan;
    await waitFor(() => calls.length === 1);
    assert.equal(calls[0]?.code, 'CANCELLED');
  } finally {
    client.close();
  }
});

test('a handler stuck in an await is not waited for once the client cancels', async () => {
  const calls: CallInfo[] = [];
  const address = await serveCatalog(
    {
      async *watchCatalog(_req, ctx) {
        yield { epoch: 1n };
        // waits for an epoch that never comes, but gives up when the call is cancelled
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      },
    },
    { onCallEnd: (i) => calls.push(i) },
  );
  const client = createClient(CatalogService, address);
  const controller = new AbortController();
  try {
    const got: bigint[] = [];
    await assert.rejects(async () => {
      for await (const c of client.watchCatalog({}, { signal: controller.signal })) {
        got.push(c.epoch);
        controller.abort();
      }
    }, rejectsWith(Code.CANCELLED));
    assert.deepEqual(got, [1n]);
    await waitFor(() => calls.length === 1);
    assert.equal(calls[0]?.code, 'CANCELLED');
  } finally {
    client.close();
  }
});

test('an RpcError reaches the client with its code and message', async () => {
  const address = await serveCatalog({
    getCatalog: () => {
      throw new RpcError(Code.NOT_FOUND, 'no catalog at epoch 9');
    },
    async *watchCatalog() {
      throw new RpcError(Code.FAILED_PRECONDITION, 'catalog not loaded');
    },
  });
  const client = createClient(CatalogService, address);
  try {
    await assert.rejects(
      client.getCatalog({}),
      rejectsWith(Code.NOT_FOUND, /^no catalog at epoch 9$/),
    );
    await assert.rejects(
      async () => {
        for await (const _ of client.watchCatalog({})) assert.fail('no item expected');
      },
      rejectsWith(Code.FAILED_PRECONDITION, /catalog not loaded/),
    );
  } finally {
    client.close();
  }
});

test('a plain Error becomes INTERNAL with its message, and the server keeps serving', async () => {
  let calls = 0;
  const address = await serveCatalog({
    getCatalog: async () => {
      if (++calls === 1) throw new Error('catalog database unreachable');
      return { epoch: 2n };
    },
    async *watchCatalog() {
      yield { epoch: 1n };
      throw new TypeError('boom mid-stream');
    },
  });
  const client = createClient(CatalogService, address);
  try {
    await assert.rejects(
      client.getCatalog({}),
      rejectsWith(Code.INTERNAL, /catalog database unreachable/),
    );
    assert.equal((await client.getCatalog({})).epoch, 2n);
    const got: bigint[] = [];
    await assert.rejects(
      async () => {
        for await (const c of client.watchCatalog({})) got.push(c.epoch);
      },
      rejectsWith(Code.INTERNAL, /boom mid-stream/),
    );
    assert.deepEqual(got, [1n]);
  } finally {
    client.close();
  }
});

test('malformed request bytes from a raw grpc-js client get INVALID_ARGUMENT', async () => {
  const address = await serveCatalog({
    getCatalog: () => ({ epoch: 1n }),
    async *watchCatalog() {
      yield { epoch: 1n };
    },
  });
  const raw = new grpc.Client(address, grpc.credentials.createInsecure());
  const pass = (b: Buffer): Buffer => b;
  // field 1 (varint) with its value missing; then a length-delimited field longer than the data
  for (const bytes of [Buffer.from([0x08]), Buffer.from([0x0a, 0x05, 0x01])]) {
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      raw.makeUnaryRequest('/tessera.v1.CatalogService/GetCatalog', pass, pass, bytes, (e) =>
        resolve(e),
      ),
    );
    assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(err?.details ?? '', /malformed tessera\.v1\.GetCatalogRequest/);
  }
  const streamErr = await new Promise<grpc.ServiceError>((resolve) => {
    const call = raw.makeServerStreamRequest(
      '/tessera.v1.CatalogService/WatchCatalog',
      pass,
      pass,
      Buffer.from([0x08]),
    );
    call.on('data', () => {});
    call.on('error', resolve);
  });
  assert.equal(streamErr.code, grpc.status.INVALID_ARGUMENT);
  // a well-formed request on the same connection still works
  const ok = await new Promise<Buffer>((resolve, reject) =>
    raw.makeUnaryRequest(
      '/tessera.v1.CatalogService/GetCatalog',
      pass,
      pass,
      Buffer.from(toBinary(GetCatalogRequestSchema, create(GetCatalogRequestSchema))),
      (e, v) => (e || !v ? reject(e ?? new Error('no value')) : resolve(v)),
    ),
  );
  assert.deepEqual([...ok], [0x08, 0x01]);
  raw.close();
});

test('authorize runs before the handler and can refuse with UNAUTHENTICATED', async () => {
  let handled = 0;
  const calls: CallInfo[] = [];
  const address = await serveCatalog(
    {
      getCatalog: () => {
        handled++;
        return { epoch: 1n };
      },
      async *watchCatalog() {
        handled++;
        yield { epoch: 1n };
      },
    },
    {
      authorize: (ctx) => {
        if (ctx.metadata.get('authorization')[0] !== 'Bearer right')
          throw new RpcError(Code.UNAUTHENTICATED, 'a bearer token is required');
      },
      onCallEnd: (i) => calls.push(i),
    },
  );
  const anonymous = createClient(CatalogService, address);
  const wrong = createClient(CatalogService, address, { token: 'wrong' });
  const right = createClient(CatalogService, address, { token: 'right' });
  try {
    await assert.rejects(
      anonymous.getCatalog({}),
      rejectsWith(Code.UNAUTHENTICATED, /bearer token/),
    );
    await assert.rejects(wrong.getCatalog({}), rejectsWith(Code.UNAUTHENTICATED));
    await assert.rejects(async () => {
      for await (const _ of wrong.watchCatalog({})) assert.fail('no item expected');
    }, rejectsWith(Code.UNAUTHENTICATED));
    assert.equal(handled, 0);
    assert.equal((await right.getCatalog({})).epoch, 1n);
    assert.equal(handled, 1);
    assert.deepEqual(
      calls.map((c) => c.code),
      ['UNAUTHENTICATED', 'UNAUTHENTICATED', 'UNAUTHENTICATED', 'OK'],
    );
  } finally {
    anonymous.close();
    wrong.close();
    right.close();
  }
});

test('a method missing from the implementation answers UNIMPLEMENTED', async () => {
  const address = await serveCatalog({ getCatalog: () => ({ epoch: 1n }) });
  const client = createClient(CatalogService, address);
  try {
    await assert.rejects(async () => {
      for await (const _ of client.watchCatalog({})) assert.fail('no item expected');
    }, rejectsWith(Code.UNIMPLEMENTED));
  } finally {
    client.close();
  }
});

test('deadlines and client-side abort reject with DEADLINE_EXCEEDED and CANCELLED', async () => {
  let aborted = 0;
  const address = await serveCatalog({
    getCatalog: (_req, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener('abort', () => {
          aborted++;
          resolve({ epoch: 0n });
        });
      }),
  });
  const client = createClient(CatalogService, address, { deadlineMs: 100 });
  try {
    await assert.rejects(client.getCatalog({}), rejectsWith(Code.DEADLINE_EXCEEDED));
    const controller = new AbortController();
    const pending = client.getCatalog({}, { signal: controller.signal, deadlineMs: 10_000 });
    setTimeout(() => controller.abort(), 30);
    await assert.rejects(pending, rejectsWith(Code.CANCELLED));
    await waitFor(() => aborted === 2);
  } finally {
    client.close();
  }
});

test('bidi: the client sends, half-closes, and reads every answer; clients can share a channel', async () => {
  const s = await startServer((server) => {
    addService(server, AgentService, {
      async *report(reports, ctx) {
        for await (const r of reports) {
          yield { action: r.reachable ? 'none' : 'promote', reason: `${r.node} via ${ctx.method}` };
        }
        yield { action: 'bye' };
      },
      getHealth: () => ({}),
    });
    addService(server, CatalogService, {
      getCatalog: () => ({ epoch: 5n }),
      async *watchCatalog() {},
    });
  });
  servers.push(s);
  const agent = createClient(AgentService, s.address);
  const catalog = createClient(CatalogService, s.address, { channel: agent.grpcClient });
  try {
    const stream = agent.report();
    stream.send({ node: 'n1', reachable: true });
    stream.send({ node: 'n2', reachable: false });
    stream.end();
    const actions: string[] = [];
    for await (const d of stream) actions.push(`${d.action}:${d.reason}`);
    assert.deepEqual(actions, ['none:n1 via Report', 'promote:n2 via Report', 'bye:']);
    assert.equal((await catalog.getCatalog({})).epoch, 5n);
    catalog.close(); // shared channel: must not close the agent's connection
    const again = agent.report();
    again.end();
    const last: string[] = [];
    for await (const d of again) last.push(d.action);
    assert.deepEqual(last, ['bye']);
  } finally {
    agent.close();
  }
});

async function waitFor(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(5);
  }
}
