// `tessera up --no-replicas` and `tessera down` end to end, in a temporary directory: three real
// Postgres servers, the real coordinator under the real supervisor, the sample schema, the fences,
// a second `up` that changes nothing, and a `down` that leaves no process behind. (The cluster
// with replicas: up-replicas.test.ts.)
import { after, before, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { hashKeyText } from '@tessera/pg-hash';
import { main } from '../cli.js';
import { captureIo } from '../io.js';
import { layout, readClusterFile, readStateFile, type ClusterFile } from './layout.js';
import { runCli } from './run-cli.testutil.js';
import type { ClusterPasswords } from './passwords.js';
import { isRunning } from './processes.js';

let root: string;
let dir: string;
const tessera = (...argv: string[]) => runCli(root, ...argv);

before(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-up-'));
  // The servers run as `postgres` when we are root: it must be able to walk into the directory.
  chmodSync(root, 0o755);
  dir = join(root, 'cluster');
});

after(async () => {
  await tessera('down', '--dir', dir); // in case a test failed half-way
  rmSync(root, { recursive: true, force: true });
});

function pgrep(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // exit 1: no match
  }
}

interface StatusDoc {
  epoch: string;
  nodes: { name: string; role: string; port: number }[];
  keyspaces: {
    name: string;
    type: string;
    seed: string;
    ranges: { lo: string; hi: string; owner: string }[];
  }[];
  tables: { schema: string; name: string; kind: string; keyspace: string | null }[];
}

let cluster: ClusterFile;
let status: StatusDoc;
/** app's generated password (passwords: up-auth.test.ts). */
let appPassword: string;

test(
  'up starts three nodes and the coordinator, and loads the sample schema',
  { timeout: 90_000 },
  async () => {
    const r = await tessera('up', '--dir', dir, '--no-replicas');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /initialised Postgres data directories: home, data1, data2/);
    appPassword = (JSON.parse(readFileSync(layout(dir).passwordsFile, 'utf8')) as ClusterPasswords)
      .app;
    assert.match(r.out, new RegExp(`postgresql://app:${appPassword}@127\\.0\\.0\\.1:\\d+/app`));
    assert.match(
      r.out,
      /coordinator: +127\.0\.0\.1:\d+ \(gRPC\), metrics http:\/\/127\.0\.0\.1:\d+\/metrics/,
    );
    assert.match(r.out, new RegExp(`logs: +${join(dir, 'logs')}`));
    assert.match(r.out, /tessera down/);
    cluster = readClusterFile(layout(dir)) as ClusterFile;
    assert.equal(cluster.bootstrapped, true);

    const s = await tessera(
      'status',
      '--json',
      '--coordinator',
      `127.0.0.1:${cluster.coordinatorPort}`,
    );
    assert.equal(s.code, 0, s.err);
    status = JSON.parse(s.out) as StatusDoc;
    assert.deepEqual(status.nodes.map((n) => `${n.name}/${n.role}`).sort(), [
      'data1/data',
      'data2/data',
      'home/home',
    ]);
    assert.equal(status.nodes.find((n) => n.name === 'home')?.port, cluster.nodePorts.home);
    const byName = new Map(status.keyspaces.map((k) => [k.name, k]));
    assert.equal(byName.get('tenants')?.type, 'bigint');
    assert.equal(byName.get('events')?.type, 'uuid');
    for (const k of byName.values()) {
      assert.ok(k.ranges.length >= 2);
      assert.deepEqual(new Set(k.ranges.map((x) => x.owner)), new Set(['data1', 'data2']));
    }
    const tables = status.tables.map((t) => `${t.schema}.${t.name}:${t.kind}`).sort();
    assert.deepEqual(tables, [
      'public.events:sharded',
      'public.orders:sharded',
      'public.plans:reference',
      'public.tenants:sharded',
    ]);

    // The coordinator found the cluster through the directory, without --coordinator.
    const io = captureIo({ TESSERA_HOME: dir }, root);
    assert.equal(await main(['nodes', 'list'], io), 0, io.stderr);
    assert.match(io.stdout, /^data2\s+data\s+active/m);
  },
);

/** A tenant id whose hash lands in a range of `owner`. */
function tenantOwnedBy(owner: string): bigint {
  const ranges = status.keyspaces.find((k) => k.name === 'tenants')?.ranges ?? [];
  for (let id = 1000n; ; id++) {
    const h = hashKeyText('bigint', id.toString(), 0n);
    if (ranges.some((r) => BigInt(r.lo) <= h && h <= BigInt(r.hi) && r.owner === owner)) return id;
  }
}

test('the fence takes rows the node owns and refuses the others (23514)', async () => {
  const client = new pg.Client({
    connectionString: `postgresql://app:${appPassword}@127.0.0.1:${cluster.nodePorts.data1}/app`,
  });
  await client.connect();
  try {
    const mine = tenantOwnedBy('data1');
    await client.query('insert into tenants (id, name, plan_id) values ($1, $2, 1)', [
      mine.toString(),
      'owned here',
    ]);
    const foreign = tenantOwnedBy('data2');
    await assert.rejects(
      client.query('insert into tenants (id, name, plan_id) values ($1, $2, 1)', [
        foreign.toString(),
        'not here',
      ]),
      (e: unknown) =>
        (e as { code?: string }).code === '23514' && /tessera_owns/.test((e as Error).message),
    );
    await assert.rejects(
      client.query('insert into orders (tenant_id, id, amount_cents) values ($1, 1, 100)', [
        foreign.toString(),
      ]),
      (e: unknown) => (e as { code?: string }).code === '23514',
    );
    // Sample rows landed where they belong, and the reference table is everywhere.
    const plans = await client.query('select count(*)::int as n from plans');
    assert.equal(plans.rows[0].n, 3);
  } finally {
    await client.end();
  }
  const home = new pg.Client({
    connectionString: `postgresql://app:${appPassword}@127.0.0.1:${cluster.nodePorts.home}/app`,
  });
  await home.connect();
  try {
    const audit = await home.query('select count(*)::int as n from audit_log');
    assert.ok(audit.rows[0].n >= 1);
    // The home node owns no range: its fence refuses every sharded row.
    await assert.rejects(
      home.query("insert into tenants (id, name, plan_id) values (1, 'x', 1)"),
      (e: unknown) => (e as { code?: string }).code === '23514',
    );
  } finally {
    await home.end();
  }
});

test('a second up reuses the running cluster and changes nothing', async () => {
  const r = await tessera('up', '--dir', dir);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /already running/);
  assert.doesNotMatch(r.out, /initialised|sample schema created/);
  const s = await tessera(
    'status',
    '--json',
    '--coordinator',
    `127.0.0.1:${cluster.coordinatorPort}`,
  );
  assert.equal((JSON.parse(s.out) as StatusDoc).epoch, status.epoch);
});

test(
  'down stops everything it started; a second down says nothing runs',
  { timeout: 60_000 },
  async () => {
    const state = readStateFile(layout(dir));
    assert.ok(state, 'state.json is written while the cluster runs');
    const pids = [
      state.supervisor.pid,
      ...Object.values(state.nodes).map((n) => n.pid),
      ...Object.values(state.services).map((s) => s.pid),
    ];
    // supervisor, 3 nodes, the coordinator, and whichever other services this build has
    assert.equal(Object.keys(state.nodes).length, 3);
    assert.ok('coordinator' in state.services, 'the coordinator is supervised');
    const r = await tessera('down', '--dir', dir);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /stopped the local cluster/);
    // Gone or a zombie (exited, not yet reaped by its new parent): what `down` waits for.
    for (const pid of pids) assert.equal(isRunning(pid), false, `pid ${pid} is still running`);
    assert.deepEqual(pgrep(dir), []);
    const again = await tessera('down', '--dir', dir);
    assert.equal(again.code, 0);
    assert.match(again.out, /nothing is running/);
  },
);
