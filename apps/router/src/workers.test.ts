// `--workers 2`: two router processes on one port. 50 clients work through it, both workers
// serve metrics (metrics port + index), and a CancelRequest reaches the worker holding the
// session whichever worker accepted it (relayed by the primary).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { CancelRegistry } from './cancel.js';
import { keyOf, sendCancel } from './testing/cancel.js';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

let c: TestCluster;
let router: ChildProcess;
let port = 0;
let metricsPort = 0;

async function freePorts(n: number): Promise<number[]> {
  // n consecutive free ports starting at a random one (the metrics ports are base + index).
  for (;;) {
    const base = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (base + n > 65535) continue;
    const ok = await Promise.all(
      Array.from(
        { length: n },
        (_, i) =>
          new Promise<boolean>((resolve) => {
            const s = createServer();
            s.once('error', () => resolve(false));
            s.listen(base + i, '127.0.0.1', () => s.close(() => resolve(true)));
          }),
      ),
    );
    if (ok.every(Boolean)) return Array.from({ length: n }, (_, i) => base + i);
  }
}

/** Starts the two-worker router on free ports; rejects if it exits before it serves. */
async function spawnRouter(): Promise<void> {
  const [p] = await freePorts(1);
  const [m] = await freePorts(2);
  port = p!;
  metricsPort = m!;
  router = spawn(
    process.execPath,
    [
      ...['--conditions=development', '--import', 'tsx'],
      new URL('./main.ts', import.meta.url).pathname,
      ...['--workers', '2', '--listen', `127.0.0.1:${port}`],
      ...['--metrics-port', String(metricsPort), '--pool-size', '20'],
      ...['--coordinator', c.coordinator.address, '--router-id', 'workers-test'],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TESSERA_LOG_LEVEL: 'info' } },
  );
  // Its stderr is forwarded, not inherited: a process left running must not hold the test
  // runner's output open (which keeps the runner waiting with nothing printed).
  router.stderr!.pipe(process.stderr);
  const serving = new Promise<void>((resolve, reject) => {
    createInterface({ input: router.stdout! }).on('line', (line) => {
      if (line.includes('router workers serving')) resolve();
    });
    router.once('exit', (code) => reject(new Error(`the router exited (${code})`)));
  });
  await serving;
}

before(async () => {
  c = await startTestCluster();
  const admin = new pg.Client({ connectionString: c.url() });
  await admin.connect();
  await admin.query(
    'create table orders (tenant_id bigint not null, id bigint not null, total int)',
  );
  await admin.end();
  // A free port can be taken by another process before the router binds it (EADDRINUSE):
  // then the router exits, and it is started again on other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      await spawnRouter();
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
  // Every worker must have a catalog before the test starts: retry until routed queries pass.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const probes = await Promise.allSettled(
      [0, 1, 2, 3].map(async () => {
        const client = new pg.Client({
          host: '127.0.0.1',
          port,
          user: 'postgres',
          database: 'postgres',
        });
        await client.connect();
        try {
          await client.query('select count(*) from orders where tenant_id = 1');
        } finally {
          await client.end();
        }
      }),
    );
    if (probes.every((p) => p.status === 'fulfilled')) break;
    if (Date.now() > deadline) throw new Error('the workers did not get a catalog in time');
    await new Promise((r) => setTimeout(r, 200));
  }
});

after(async () => {
  if (router && router.exitCode === null) {
    const exited = new Promise((r) => router.once('exit', r));
    router.kill('SIGTERM');
    await exited;
  }
  await c?.dispose();
});

function client(): pg.Client {
  return new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
}

async function metricsOf(p: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${p}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

describe('--workers 2', () => {
  test('50 clients work through both workers, each serving its own metrics', async () => {
    const clients = Array.from({ length: 50 }, client);
    await Promise.all(clients.map((cl) => cl.connect()));
    try {
      // The pid a client got says which worker holds it: both must hold some.
      const byWorker = [0, 0];
      for (const cl of clients) byWorker[CancelRegistry.workerOf(keyOf(cl).pid, 2)]!++;
      assert.ok(byWorker[0]! > 0 && byWorker[1]! > 0, `clients per worker: ${byWorker.join(', ')}`);
      await Promise.all(
        clients.map(async (cl, i) => {
          const tenant = (i % 10) + 1;
          await cl.query('insert into orders (tenant_id, id, total) values ($1, $2, $3)', [
            tenant,
            i,
            i,
          ]);
          const r = await cl.query<{ total: number }>(
            'select total from orders where tenant_id = $1 and id = $2',
            [tenant, i],
          );
          assert.equal(r.rows[0]?.total, i);
        }),
      );
      for (const w of [0, 1]) {
        const text = await metricsOf(metricsPort + w);
        const m = /tessera_router_client_connections\{service="router"\} (\d+)/.exec(text);
        assert.ok(m, `worker ${w} serves its metrics`);
        assert.equal(Number(m[1]), byWorker[w], `worker ${w} counts its own clients`);
        assert.match(
          text,
          /tessera_router_statements_total\{route="single",service="router"\} [1-9]/,
        );
      }
    } finally {
      await Promise.all(clients.map((cl) => cl.end()));
    }
  });

  test('a CancelRequest reaches the worker holding the session, whichever worker accepts it', async () => {
    // Two sessions on each worker; their cancels arrive on connections dealt round-robin, so
    // some land on the other worker and must be relayed.
    const clients: pg.Client[] = [];
    const perWorker = [0, 0];
    while (perWorker[0]! < 2 || perWorker[1]! < 2) {
      const cl = client();
      await cl.connect();
      const w = CancelRegistry.workerOf(keyOf(cl).pid, 2);
      if (perWorker[w]! >= 2) {
        await cl.end();
        continue;
      }
      perWorker[w]!++;
      clients.push(cl);
    }
    try {
      const running = clients.map((cl) =>
        cl.query('select pg_sleep(30), tenant_id from orders where tenant_id = 1').then(
          () => undefined,
          (e: { code?: string }) => e,
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      const sentAt = Date.now();
      for (const cl of clients) {
        const { pid, secret } = keyOf(cl);
        await sendCancel(port, pid, secret);
      }
      for (const r of running) assert.equal((await r)?.code, '57014');
      assert.ok(Date.now() - sentAt < 5_000, `cancelled within ${Date.now() - sentAt} ms`);
      for (const cl of clients) assert.equal((await cl.query('select 1 as x')).rows[0].x, 1);
    } finally {
      await Promise.all(clients.map((cl) => cl.end()));
    }
  });
});

describe('cancel keys of a worker', () => {
  test('pids encode the worker; a cancel for another worker is forwarded, not run here', () => {
    const forwarded: [number, number, number][] = [];
    const reg = new CancelRegistry({
      index: 1,
      count: 3,
      forward: (w, pid, secret) => forwarded.push([w, pid, secret]),
    });
    for (let i = 0; i < 1000; i++) {
      const { pid } = reg.mintKey();
      assert.ok(pid > 0 && pid < 2 ** 31);
      assert.equal(CancelRegistry.workerOf(pid, 3), 1);
    }
    reg.cancel(3 * 12345 + 2, 7);
    reg.cancel(3 * 12345 + 1, 7); // its own (unknown pid): ignored silently
    assert.deepEqual(forwarded, [[2, 3 * 12345 + 2, 7]]);
  });
});
