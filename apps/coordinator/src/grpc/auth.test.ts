// Bearer tokens off loopback: the server decides by its listen address (0.0.0.0 here) even though
// the test connects through 127.0.0.1. Reads stay open; changes need the token.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { Code, KeyType, NodeRole, RpcError, parseAddress } from '@tessera/proto';
import { startCoordinator, type RunningCoordinator } from '../coordinator.js';
import {
  clientsFor,
  freshDatabase,
  quietLogger,
  startPostgres,
  type PgServer,
} from '../testing.js';
import { tokenMatches } from './auth.js';

const TOKEN = 'correct horse battery staple';
let server: PgServer;
let coordinator: RunningCoordinator;
let loopbackAddress: string;
before(async () => {
  server = await startPostgres({ name: 'auth' });
  coordinator = await startCoordinator(
    {
      catalogUrl: await freshDatabase(server),
      listen: '0.0.0.0:0',
      metricsPort: 0,
      adminToken: TOKEN,
      standbyPollMs: 100,
      recoveryGraceMs: 1000,
    },
    { log: quietLogger() },
  );
  await coordinator.whenActive;
  loopbackAddress = `127.0.0.1:${parseAddress(coordinator.address).port}`;
});
after(async () => {
  await coordinator.stop();
  await server.dispose();
});

const unauthenticated = (e: unknown) =>
  e instanceof RpcError &&
  e.code === Code.UNAUTHENTICATED &&
  /admin calls need a bearer token/.test(e.message);

test('without the token admin changes, job mutations and Resolve are UNAUTHENTICATED; reads are not', async () => {
  const anon = clientsFor(loopbackAddress);
  const wrong = clientsFor(loopbackAddress, 'guess');
  try {
    await assert.rejects(
      anon.admin.addNode({ name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME }),
      unauthenticated,
    );
    await assert.rejects(
      wrong.admin.createKeyspace({ name: 'k', keyType: KeyType.BIGINT }),
      unauthenticated,
    );
    await assert.rejects(anon.jobs.submitJob({ kind: 'split', steps: ['a'] }), unauthenticated);
    await assert.rejects(anon.txn.resolve({}), unauthenticated);
    const c = await anon.catalog.getCatalog({});
    assert.equal(c.epoch, 1n, 'nothing changed');
    assert.deepEqual((await anon.jobs.listJobs({})).jobs, []);
  } finally {
    anon.close();
    wrong.close();
  }
});

test('with the token the same calls succeed', async () => {
  const admin = clientsFor(loopbackAddress, TOKEN);
  try {
    const { epoch } = await admin.admin.addNode({
      name: 'home',
      host: '127.0.0.1',
      port: 5432,
      role: NodeRole.HOME,
    });
    assert.equal(epoch, 2n);
    const job = await admin.jobs.submitJob({ kind: 'verify', steps: ['count'] });
    assert.equal(job.steps.length, 1);
    assert.deepEqual(await admin.txn.resolve({}), {
      $typeName: 'tessera.v1.ResolveResponse',
      committed: 0,
      rolledBack: 0,
    });
  } finally {
    admin.close();
  }
});

test('token comparison', () => {
  assert.equal(tokenMatches(TOKEN, TOKEN), true);
  assert.equal(tokenMatches('', TOKEN), false);
  assert.equal(tokenMatches(TOKEN + 'x', TOKEN), false);
});
