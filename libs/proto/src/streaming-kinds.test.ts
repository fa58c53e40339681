// Client-streaming and bidi calls over a service built at run time (the tessera protos have no
// client-streaming method), plus hostile bidi input from a raw grpc-js client.
import { test, after } from 'node:test';
import * as assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { create, createFileRegistry, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, Message } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from '@bufbuild/protobuf/wkt';
import { Code, RpcError, addService, createClient } from './index.js';
import type {
  BidiStreamingCall,
  BidiStreamingImpl,
  ClientStreamingCall,
  ClientStreamingImpl,
  ServiceImpl,
} from './index.js';
import { startServer, type TestServer } from './testing.js';

const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: 'test/v1/sum.proto',
    package: 'test.v1',
    syntax: 'proto3',
    messageType: [
      {
        name: 'Num',
        field: [
          {
            name: 'value',
            jsonName: 'value',
            number: 1,
            type: FieldDescriptorProto_Type.INT64,
            label: FieldDescriptorProto_Label.OPTIONAL,
          },
        ],
      },
    ],
    service: [
      {
        name: 'Sum',
        method: [
          {
            name: 'Add',
            inputType: '.test.v1.Num',
            outputType: '.test.v1.Num',
            clientStreaming: true,
          },
          {
            name: 'Running',
            inputType: '.test.v1.Num',
            outputType: '.test.v1.Num',
            clientStreaming: true,
            serverStreaming: true,
          },
        ],
      },
    ],
  }),
  () => undefined,
);
const Sum = registry.getService('test.v1.Sum')!;
const Num = registry.getMessage('test.v1.Num')!;
type Num = Message & { value: bigint };
const value = (m: Message): bigint => (m as Num).value;

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.stop();
});

async function serveSum(impl: {
  add: ClientStreamingImpl<DescMessage, DescMessage>;
  running: BidiStreamingImpl<DescMessage, DescMessage>;
}): Promise<string> {
  const s = await startServer((server) => addService(server, Sum, impl as ServiceImpl<typeof Sum>));
  servers.push(s);
  return s.address;
}

test('client streaming: every request arrives, the answer comes back; an early server error does not hang the sender', async () => {
  const address = await serveSum({
    add: async (reqs) => {
      let total = 0n;
      for await (const r of reqs) {
        total += value(r);
        if (value(r) < 0n) throw new RpcError(Code.OUT_OF_RANGE, `negative value ${value(r)}`);
      }
      return { value: total };
    },
    async *running() {},
  });
  const client = createClient(Sum, address);
  const add = client['add'] as ClientStreamingCall<DescMessage, DescMessage>;
  try {
    const nums = Array.from({ length: 100 }, (_, i) => ({ value: BigInt(i + 1) }));
    assert.equal(value(await add(nums)), 5050n);
    async function* forever(): AsyncGenerator<{ value: bigint }> {
      for (let i = 1n; ; i++) yield { value: i % 100n === 0n ? -i : i };
    }
    await assert.rejects(
      add(forever()),
      (e: unknown) =>
        e instanceof RpcError &&
        e.code === Code.OUT_OF_RANGE &&
        /negative value -100/.test(e.details),
    );
  } finally {
    client.close();
  }
});

test('bidi: answers interleave with requests, and a client cancel aborts the handler', async () => {
  let aborted!: () => void;
  const sawAbort = new Promise<void>((r) => (aborted = r));
  const address = await serveSum({
    add: async () => ({ value: 0n }),
    async *running(reqs, ctx) {
      ctx.signal.addEventListener('abort', () => aborted());
      let total = 0n;
      for await (const r of reqs) yield { value: (total += value(r)) };
    },
  });
  const client = createClient(Sum, address);
  const running = client['running'] as BidiStreamingCall<DescMessage, DescMessage>;
  try {
    const stream = running();
    const replies = stream[Symbol.asyncIterator]();
    const got: bigint[] = [];
    for (const n of [5n, 7n, 30n]) {
      stream.send({ value: n });
      const r = await replies.next();
      assert.ok(!r.done);
      got.push(value(r.value));
    }
    assert.deepEqual(got, [5n, 12n, 42n]);
    stream.cancel();
    await sawAbort;
    await assert.rejects(
      replies.next(),
      (e: unknown) => e instanceof RpcError && e.code === Code.CANCELLED,
    );
  } finally {
    client.close();
  }
});

test('bidi: a malformed message mid-stream ends the call with INVALID_ARGUMENT', async () => {
  const address = await serveSum({
    add: async () => ({ value: 0n }),
    async *running(reqs) {
      for await (const r of reqs) yield { value: value(r) };
    },
  });
  const raw = new grpc.Client(address, grpc.credentials.createInsecure());
  const pass = (b: Buffer): Buffer => b;
  const call = raw.makeBidiStreamRequest('/test.v1.Sum/Running', pass, pass);
  const got: Buffer[] = [];
  const status = await new Promise<grpc.StatusObject>((resolve) => {
    call.on('data', (b: Buffer) => got.push(b));
    call.on('error', () => {});
    call.on('status', resolve);
    call.write(Buffer.from(toBinary(Num, create(Num, { value: 9n }))));
    call.write(Buffer.from([0x08, 0xff])); // varint cut short
  });
  assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
  assert.match(status.details, /malformed test\.v1\.Num/);
  assert.equal(got.length, 1);
  raw.close();
});

test(
  'a call whose client streams requests gets its response headers at once, before any answer',
  { timeout: 10_000 },
  async () => {
    // Until headers arrive, a grpc-js client keeps a copy of every message it sent, for a retry:
    // an agent's report stream, which the coordinator rarely answers, grew by every report.
    const address = await serveSum({
      add: async (reqs) => {
        for await (const r of reqs) void r;
        return { value: 0n };
      },
      async *running(reqs) {
        for await (const r of reqs) void r;
      },
    });
    const raw = new grpc.Client(address, grpc.credentials.createInsecure());
    const pass = (b: Buffer): Buffer => b;
    try {
      const bidi = raw.makeBidiStreamRequest('/test.v1.Sum/Running', pass, pass);
      bidi.on('error', () => {});
      bidi.write(Buffer.from(toBinary(Num, create(Num, { value: 1n }))));
      await new Promise<void>((resolve) => bidi.once('metadata', () => resolve()));
      bidi.cancel();
      const upload = raw.makeClientStreamRequest('/test.v1.Sum/Add', pass, pass, () => {});
      upload.on('error', () => {});
      upload.write(Buffer.from(toBinary(Num, create(Num, { value: 1n }))));
      await new Promise<void>((resolve) => upload.once('metadata', () => resolve()));
      upload.cancel();
    } finally {
      raw.close();
    }
  },
);
