// Reflection end to end: a real server with every tessera.v1 service and reflection, queried the
// way grpcurl does (v1 and v1alpha), then called through descriptors that came only from reflection.
import { test, before, after } from 'node:test';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import * as assert from 'node:assert/strict';
import { toJson } from '@bufbuild/protobuf';
import type { DescMessage } from '@bufbuild/protobuf';
import {
  CatalogService,
  Code,
  NodeRole,
  RpcError,
  TESSERA_SERVICES,
  addReflection,
  addService,
  createClient,
  reflectionFileContaining,
  reflectionListServices,
} from './index.js';
import type { ServiceImpl, UnaryCall } from './index.js';
import { startServer, type TestServer } from './testing.js';

let server: TestServer;
before(async () => {
  server = await startServer((s) => {
    addService(s, CatalogService, {
      getCatalog: () => ({
        epoch: 42n,
        clusterUid: 'uid-1',
        nodes: [{ name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME }],
      }),
      async *watchCatalog() {},
    } satisfies ServiceImpl<typeof CatalogService>);
    addReflection(s, TESSERA_SERVICES);
  });
});
after(() => server.stop());

const SERVICES = [
  'tessera.v1.AdminService',
  'tessera.v1.AgentService',
  'tessera.v1.CatalogService',
  'tessera.v1.CoordinatorService',
  'tessera.v1.JobService',
  'tessera.v1.RouterLeaseService',
  'tessera.v1.RouterService',
  'tessera.v1.TxnService',
];

for (const version of ['v1', 'v1alpha'] as const) {
  test(`reflection ${version} lists the tessera.v1 services and reflection itself`, async () => {
    const names = await reflectionListServices(server.address, { version });
    for (const s of SERVICES) assert.ok(names.includes(s), `${s} missing from ${names.join(', ')}`);
    assert.ok(names.includes('grpc.reflection.v1.ServerReflection'));
    assert.ok(names.includes('grpc.reflection.v1alpha.ServerReflection'));
    assert.equal(names.length, SERVICES.length + 2);
  });

  test(`reflection ${version} resolves the file of tessera.v1.CatalogService, with its methods and types`, async () => {
    const registry = await reflectionFileContaining(server.address, 'tessera.v1.CatalogService', {
      version,
    });
    const svc = registry.getService('tessera.v1.CatalogService');
    assert.ok(svc);
    assert.equal(svc.file.proto.name, 'tessera/v1/catalog.proto');
    assert.deepEqual(
      svc.methods.map((m) => `${m.name}:${m.methodKind}:${m.input.typeName}->${m.output.typeName}`),
      [
        'GetCatalog:unary:tessera.v1.GetCatalogRequest->tessera.v1.Catalog',
        'WatchCatalog:server_streaming:tessera.v1.WatchCatalogRequest->tessera.v1.Catalog',
      ],
    );
    assert.ok(registry.getEnum('tessera.v1.KeyType'));
  });
}

test('a file that imports another comes back with its import (admin.proto needs catalog.proto)', async () => {
  const registry = await reflectionFileContaining(
    server.address,
    'tessera.v1.AdminService.AddNode',
  );
  const addNode = registry.getService('tessera.v1.AdminService')?.method['addNode'];
  assert.equal(addNode?.input.typeName, 'tessera.v1.AddNodeRequest');
  const role = addNode?.input.fields.find((f) => f.name === 'role');
  assert.equal(role?.fieldKind, 'enum');
  assert.equal(role?.fieldKind === 'enum' ? role.enum.typeName : '', 'tessera.v1.NodeRole');
  assert.ok(registry.getFile('tessera/v1/catalog.proto'));
});

test('an unknown symbol is NOT_FOUND', async () => {
  await assert.rejects(
    reflectionFileContaining(server.address, 'tessera.v1.NoSuchService'),
    (e: unknown) => {
      assert.ok(e instanceof RpcError);
      assert.equal(e.code, Code.NOT_FOUND);
      assert.match(e.details, /NoSuchService/);
      return true;
    },
  );
});

test('a call made only from reflected descriptors works (grpcurl-style)', async () => {
  const registry = await reflectionFileContaining(server.address, 'tessera.v1.CatalogService');
  const svc = registry.getService('tessera.v1.CatalogService');
  assert.ok(svc);
  const method = svc.methods.find((m) => m.name === 'GetCatalog');
  assert.ok(method && method.methodKind === 'unary');
  assert.notEqual(
    method.output,
    CatalogService.method.getCatalog.output as DescMessage,
    'must not be the generated descriptor',
  );
  const client = createClient(svc, server.address);
  try {
    const call = client[method.localName] as UnaryCall<DescMessage, DescMessage>;
    const res = await call({});
    assert.deepEqual(toJson(method.output, res), {
      epoch: '42',
      clusterUid: 'uid-1',
      nodes: [{ name: 'home', host: '127.0.0.1', port: 5432, role: 'NODE_ROLE_HOME' }],
    });
  } finally {
    client.close();
  }
});

// buf curl is an independent, strict reflection client (Go, like grpcurl); it ships with the repo's
// devDependencies. It tries reflection v1 and falls back to v1alpha.
const BUF = new URL('../../../node_modules/.bin/buf', import.meta.url).pathname;
test(
  'buf curl lists and calls the services from reflection alone',
  { skip: !existsSync(BUF) && 'buf is not installed' },
  async () => {
    const run = promisify(execFile);
    const base = ['curl', '--protocol', 'grpc', '--http2-prior-knowledge'];
    const url = `http://${server.address}`;
    for (const reflect of ['grpc-v1', 'grpc-v1alpha']) {
      const { stdout } = await run(BUF, [
        ...base,
        '--reflect-protocol',
        reflect,
        '--list-services',
        url,
      ]);
      assert.deepEqual(
        stdout
          .trim()
          .split('\n')
          .filter((s) => s.startsWith('tessera.')),
        SERVICES,
      );
    }
    const { stdout } = await run(BUF, [
      ...base,
      '-d',
      '{}',
      `${url}/tessera.v1.CatalogService/GetCatalog`,
    ]);
    assert.deepEqual(JSON.parse(stdout), {
      epoch: '42',
      clusterUid: 'uid-1',
      nodes: [{ name: 'home', host: '127.0.0.1', port: 5432, role: 'NODE_ROLE_HOME' }],
    });
  },
);
