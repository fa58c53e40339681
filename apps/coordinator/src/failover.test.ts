// Leader election with real processes: an active coordinator and a standby (each `src/main.ts`
// in its own node process) over one catalog database. SIGKILL the active one; the standby must
// take over and serve GetCatalog within 10 s. Every stdout line of both must be a JSON object.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Code, KeyType, NodeRole, RpcError } from '@tessera/proto';
import { clientsFor, freshDatabase, startPostgres, type PgServer } from './testing.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const TOKEN = 'process-token-never-logged';

interface Proc {
  child: ChildProcess;
  lines: string[];
  waitFor(
    pred: (entry: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function startProcess(catalogUrl: string): Proc {
  const child = spawn(
    process.execPath,
    [
      '--conditions=development',
      '--import',
      'tsx',
      MAIN,
      '--listen',
      '127.0.0.1:0',
      '--metrics-port',
      '0',
      '--standby-poll-ms',
      '200',
    ],
    {
      env: {
        PATH: process.env['PATH'],
        TESSERA_CATALOG_URL: catalogUrl,
        TESSERA_ADMIN_TOKEN: TOKEN,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  const watchers = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of watchers) w();
  });
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const waitFor: Proc['waitFor'] = (pred, timeoutMs = 20_000) =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        for (const line of lines) {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (pred(entry)) {
            watchers.delete(check);
            clearTimeout(timer);
            resolve(entry);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        watchers.delete(check);
        reject(new Error(`no matching log line within ${timeoutMs} ms; got:\n${lines.join('\n')}`));
      }, timeoutMs);
      watchers.add(check);
      check();
    });
  return { child, lines, waitFor, exited };
}

let server: PgServer;
const procs: Proc[] = [];
before(async () => {
  server = await startPostgres({ name: 'failover' });
});
after(async () => {
  for (const p of procs)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await server.dispose();
});

test('SIGKILL of the active coordinator: the standby serves GetCatalog within 10 s', async (t) => {
  const url = await freshDatabase(server);
  const a = startProcess(url);
  procs.push(a);
  const aActive = await a.waitFor((e) => e['msg'] === 'coordinator is active');
  const aAddress = String(aActive['listen']);
  const admin = clientsFor(aAddress);
  await admin.admin.addNode({ name: 'home', host: '127.0.0.1', port: 5432, role: NodeRole.HOME });
  const { epoch } = await admin.admin.createKeyspace({
    name: 'k',
    keyType: KeyType.BIGINT,
    ranges: 8,
  });
  admin.close();

  const b = startProcess(url);
  procs.push(b);
  const bStandby = await b.waitFor((e) => e['msg'] === 'coordinator is a standby');
  const bClients = clientsFor(String(bStandby['listen']));
  try {
    const who = await bClients.coordinator.getActiveCoordinator({});
    assert.deepEqual([who.active, who.address], [false, aAddress]);

    const killedAt = performance.now();
    a.child.kill('SIGKILL');
    let catalog;
    for (;;) {
      try {
        catalog = await bClients.catalog.getCatalog({}, { deadlineMs: 1000 });
        break;
      } catch (e) {
        assert.ok(e instanceof RpcError && e.code === Code.UNAVAILABLE, String(e));
        assert.ok(
          performance.now() - killedAt < 10_000,
          'the standby did not take over within 10 s',
        );
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const tookOverMs = performance.now() - killedAt;
    assert.ok(tookOverMs < 10_000, `took ${tookOverMs} ms`);
    t.diagnostic(`the standby served GetCatalog ${Math.round(tookOverMs)} ms after the SIGKILL`);
    assert.equal(
      catalog.epoch,
      epoch,
      'the new active coordinator serves the catalog the old one left',
    );
    assert.equal(catalog.ranges.length, 8);
    await b.waitFor((e) => e['msg'] === 'coordinator is active');
    // It accepts changes too.
    const next = await bClients.admin.addNode({ name: 'd1', host: '127.0.0.1', port: 5433 });
    assert.equal(next.epoch, epoch + 1n);
  } finally {
    bClients.close();
  }

  b.child.kill('SIGTERM');
  assert.equal(await b.exited, 0, 'SIGTERM stops gracefully');
  for (const p of [a, b]) {
    assert.ok(p.lines.length > 0);
    for (const line of p.lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      assert.equal(entry['service'], 'coordinator');
      assert.equal(typeof entry['level'], 'string');
      assert.ok(!line.includes(TOKEN), 'the token is never logged');
    }
  }
  const startup = JSON.parse(b.lines[0]!) as Record<string, unknown>;
  assert.equal(startup['msg'], 'coordinator listening; taking the leader lock');
  assert.equal(typeof startup['metricsPort'], 'number');
  assert.ok(
    a.lines.some((l) => (JSON.parse(l) as Record<string, unknown>)['change'] === 'CreateKeyspace'),
    'changes are logged with their epoch',
  );
});
