// Leader election in-process: never two active coordinators, a coordinator whose lock connection
// dies stops serving at once (its watchers too), and a catalog database that goes away and comes
// back means UNAVAILABLE meanwhile, then service again.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, NodeRole, RpcError } from '@tessera/proto';
import { startCoordinator, type RunningCoordinator } from '../coordinator.js';
import {
  clientsFor,
  freshDatabase,
  quietLogger,
  startPostgres,
  type PgServer,
} from '../testing.js';

let server: PgServer;
before(async () => {
  server = await startPostgres({ name: 'leader' });
});
after(() => server.dispose());

const start = (catalogUrl: string): Promise<RunningCoordinator> =>
  startCoordinator(
    {
      catalogUrl,
      listen: '127.0.0.1:0',
      metricsPort: 0,
      standbyPollMs: 100,
      recoveryGraceMs: 1000,
    },
    { log: quietLogger() },
  );

const unavailable = (e: unknown) => e instanceof RpcError && e.code === Code.UNAVAILABLE;

async function until(
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

test('killing the leader-lock connection: the holder steps down at once, the standby takes over, never two active', async () => {
  const url = await freshDatabase(server);
  const a = await start(url);
  await a.whenActive;
  const b = await start(url);
  const ca = clientsFor(a.address);
  const cb = clientsFor(b.address);
  let both = false;
  const sampler = setInterval(() => (both ||= a.isActive() && b.isActive()), 1);
  try {
    await ca.admin.addNode({ name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME });
    // The standby says so, names the active one, and a call sent to it is served by the active one.
    const who = await cb.coordinator.getActiveCoordinator({});
    assert.deepEqual([who.active, who.address, who.self], [false, a.address, b.address]);
    assert.equal((await cb.catalog.getCatalog({})).epoch, 2n);
    // Settled into a value at once: the stream may end before the assertion below is reached.
    const watchEnded = (async () => {
      for await (const _ of ca.catalog.watchCatalog({ afterEpoch: 0n })) {
        // keep reading until the stream ends
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );

    const killed = await server.query<{ pid: number }>(
      `select pid, pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted and objid = 1 and objsubid = 2`,
      [],
      new URL(url).pathname.slice(1),
    );
    assert.equal(killed.length, 1);
    assert.ok(
      unavailable(await watchEnded),
      'the watcher of the deposed coordinator is ended with UNAVAILABLE',
    );
    await until(() => b.isActive(), 5_000, 'b to take over');
    assert.equal(a.isActive(), false);
    assert.equal((await cb.catalog.getCatalog({})).epoch, 2n);
    assert.equal((await ca.coordinator.getActiveCoordinator({})).active, false);
    assert.equal(both, false, 'two coordinators were active at once');
  } finally {
    clearInterval(sampler);
    ca.close();
    cb.close();
    await a.stop();
    await b.stop();
  }
});

test('the catalog database going away: UNAVAILABLE while it is down, serving again once it is back', async () => {
  const url = await freshDatabase(server);
  const c = await start(url);
  const clients = clientsFor(c.address);
  try {
    await c.whenActive;
    await clients.admin.addNode({
      name: 'home',
      host: '127.0.0.1',
      port: 5432,
      role: NodeRole.HOME,
    });
    await server.stop('fast');
    await until(() => !c.isActive(), 5_000, 'the coordinator to step down');
    await assert.rejects(clients.catalog.getCatalog({}), unavailable);
    await assert.rejects(
      clients.admin.addNode({ name: 'd', host: '127.0.0.1', port: 1 }),
      unavailable,
    );
    await server.start();
    await until(() => c.isActive(), 10_000, 'the coordinator to come back');
    assert.equal((await clients.catalog.getCatalog({})).epoch, 2n);
    assert.equal(
      (await clients.admin.addNode({ name: 'd', host: '127.0.0.1', port: 1 })).epoch,
      3n,
    );
  } finally {
    clients.close();
    await c.stop();
  }
});
