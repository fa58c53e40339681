// Every coordinator-facing command, run in-process through main() against a real coordinator
// whose catalog lives on a real Postgres (the home node doubles as the catalog server, as in
// `tessera up`).
import { after, before, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import { startCoordinator, type RunningCoordinator } from '@tessera/coordinator';
import { freePort } from '@tessera/pgctl';
import { main } from '../cli.js';
import { captureIo } from '../io.js';

let servers: PgServer[] = [];
let coordinator: RunningCoordinator;
let cwd: string;

before(async () => {
  servers = await startPostgresCluster(3, { name: 'cli' });
  const home = servers[0] as PgServer;
  await home.query('create database tessera');
  coordinator = await startCoordinator({
    catalogUrl: home.url('tessera'),
    listen: '127.0.0.1:0',
    metricsPort: 0,
    standbyPollMs: 100,
    recoveryGraceMs: 60_000,
    logLevel: 'silent',
  });
  await coordinator.whenActive;
  // A directory with no local cluster in it, so nothing is picked up from ./.tessera.
  cwd = mkdtempSync(join(tmpdir(), 'tessera-cli-'));
});

after(async () => {
  await coordinator?.stop();
  await Promise.all(servers.map((s) => s.dispose()));
  rmSync(cwd, { recursive: true, force: true });
});

interface Result {
  code: number;
  out: string;
  err: string;
}

async function tessera(...argv: string[]): Promise<Result> {
  const io = captureIo({}, cwd);
  const code = await main([...argv, '--coordinator', coordinator.address], io);
  return { code, out: io.stdout, err: io.stderr };
}

function ok(r: Result): string {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.err}`);
  assert.equal(r.err, '');
  return r.out;
}

const node = (i: number) => `127.0.0.1:${(servers[i] as PgServer).port}`;
const MIN = '-9223372036854775808';

test('nodes add, list (text and JSON)', async () => {
  ok(await tessera('nodes', 'add', 'home', node(0), '--home'));
  assert.match(
    ok(await tessera('nodes', 'add', 'data1', node(1))),
    /added node data1 at 127\.0\.0\.1:\d+ \(epoch \d+\)/,
  );
  ok(await tessera('nodes', 'add', 'data2', node(2)));
  const text = ok(await tessera('nodes', 'list'));
  assert.match(text, /^NAME\s+ROLE\s+STATE\s+ADDRESS\s+REPLICA$/m);
  assert.match(text, new RegExp(`^home\\s+home\\s+active\\s+${node(0)}\\s+-$`, 'm'));
  const doc = JSON.parse(ok(await tessera('nodes', 'list', '--json'))) as {
    nodes: { name: string; role: string; address: string }[];
  };
  assert.deepEqual(doc.nodes.map((n) => [n.name, n.role, n.address]).sort(), [
    ['data1', 'data', node(1)],
    ['data2', 'data', node(2)],
    ['home', 'home', node(0)],
  ]);
});

test('nodes add with a replica, then remove', async () => {
  const port = await freePort();
  ok(await tessera('nodes', 'add', 'spare', `127.0.0.1:${port}`, '--replica', '127.0.0.1:1'));
  assert.match(
    ok(await tessera('nodes', 'list')),
    /^spare\s+data\s+active\s+127\.0\.0\.1:\d+\s+127\.0\.0\.1:1$/m,
  );
  assert.match(ok(await tessera('nodes', 'remove', 'spare')), /removed node spare/);
  assert.doesNotMatch(ok(await tessera('nodes', 'list')), /spare/);
});

test("removing an unknown node fails with the server's sentence, exit 1", async () => {
  const r = await tessera('nodes', 'remove', 'nosuch');
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.match(r.err, /^tessera: no node named "?nosuch"?\n$/);
});

test('keyspace create and list', async () => {
  assert.match(
    ok(await tessera('keyspace', 'create', 'tenants', '--type', 'bigint', '--ranges', '4')),
    /created keyspace tenants \(bigint, 4 ranges/,
  );
  ok(await tessera('keyspace', 'create', 'events', '--type', 'uuid', '--seed', '-42'));
  assert.match(ok(await tessera('keyspace', 'list')), /^tenants\s+bigint\s+0\s+4$/m);
  const doc = JSON.parse(ok(await tessera('keyspace', 'list', '--json'))) as {
    keyspaces: { name: string; type: string; seed: string }[];
  };
  const events = doc.keyspaces.find((k) => k.name === 'events');
  assert.equal(events?.type, 'uuid');
  assert.equal(events?.seed, '-42');
});

test('keyspace create refuses a bad type or missing --type, exit 2', async () => {
  const bad = await tessera('keyspace', 'create', 'x', '--type', 'float');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^tessera: key type "float" is not supported/);
  assert.match(bad.err, /Usage: tessera keyspace create NAME --type TYPE/);
  const missing = await tessera('keyspace', 'create', 'x');
  assert.equal(missing.code, 2);
  assert.match(missing.err, /--type is required/);
});

test('range list covers the hash space, owned round-robin by the data nodes', async () => {
  const doc = JSON.parse(ok(await tessera('range', 'list', 'tenants', '--json'))) as {
    ranges: { keyspace: string; lo: string; hi: string; owner: string; state: string }[];
  };
  assert.equal(doc.ranges.length, 4);
  assert.equal(doc.ranges[0]?.lo, MIN);
  assert.equal(doc.ranges[3]?.hi, '9223372036854775807');
  assert.deepEqual(new Set(doc.ranges.map((r) => r.owner)), new Set(['data1', 'data2']));
  assert.ok(doc.ranges.every((r) => r.state === 'active' && r.keyspace === 'tenants'));
  assert.match(ok(await tessera('range', 'list')), /^events\s+-9223372036854775808\s+/m);
  const unknown = await tessera('range', 'list', 'nosuch');
  assert.equal(unknown.code, 1);
  assert.match(unknown.err, /^tessera: no keyspace named "nosuch"\n$/);
});

test('range split --at a negative hash (value starting with a dash)', async () => {
  const at = '-7000000000000000000';
  const out = ok(await tessera('range', 'split', `tenants:${MIN}`, '--at', at));
  assert.match(out, /split tenants:-9223372036854775808 \(epoch \d+\)/);
  assert.match(out, new RegExp(`^tenants\\s+${MIN}\\s+-7000000000000000001\\s+`, 'm'));
  assert.match(out, new RegExp(`^tenants\\s+${at}\\s+`, 'm'));
  const doc = JSON.parse(ok(await tessera('range', 'list', 'tenants', '--json'))) as {
    ranges: { lo: string; hi: string }[];
  };
  assert.equal(doc.ranges.length, 5);
  assert.deepEqual(
    doc.ranges.slice(0, 2).map((r) => [r.lo, r.hi]),
    [
      [MIN, '-7000000000000000001'],
      [at, doc.ranges[1]?.hi],
    ],
  );
});

test('range split without --at splits at the midpoint', async () => {
  ok(await tessera('range', 'split', 'events:-9223372036854775808'));
  const doc = JSON.parse(ok(await tessera('range', 'list', 'events', '--json'))) as {
    ranges: { lo: string; hi: string }[];
  };
  assert.equal(doc.ranges.length, 2);
});

test('malformed KEYSPACE:LO is a usage error, exit 2, and no call is made', async () => {
  for (const arg of ['tenants', 'tenants:12abc', 'tenants:9223372036854775808', ':0']) {
    const r = await tessera('range', 'split', arg);
    assert.equal(r.code, 2, arg);
    assert.match(
      r.err,
      /^tessera: .+\nUsage: tessera range split KEYSPACE:LO \[--at HASH\]\n/,
      arg,
    );
  }
  const badAt = await tessera('range', 'split', `tenants:${MIN}`, '--at', '1.5');
  assert.equal(badAt.code, 2);
  assert.match(badAt.err, /--at must be a signed 64-bit decimal integer, not "1.5"/);
});

test('splitting at a bound outside the range is refused by the coordinator, exit 1', async () => {
  const r = await tessera('range', 'split', `tenants:${MIN}`, '--at', MIN);
  assert.equal(r.code, 1);
  assert.match(r.err, /^tessera: [^\n]+\n$/);
});

test('table distribute, reference and list', async () => {
  assert.match(
    ok(
      await tessera(
        'table',
        'distribute',
        'public.orders',
        '--column',
        'tenant_id',
        '--keyspace',
        'tenants',
      ),
    ),
    /public\.orders is sharded by tenant_id in keyspace tenants/,
  );
  ok(await tessera('table', 'distribute', 'tenants', '--column', 'id', '--keyspace', 'tenants'));
  ok(await tessera('table', 'reference', 'plans'));
  const text = ok(await tessera('table', 'list'));
  assert.match(text, /^public\.orders\s+sharded\s+tenants\s+tenant_id$/m);
  assert.match(text, /^public\.tenants\s+sharded\s+tenants\s+id$/m);
  assert.match(text, /^public\.plans\s+reference\s+-\s+-$/m);
  const doc = JSON.parse(ok(await tessera('table', 'list', '--json'))) as {
    tables: { schema: string; name: string; kind: string; keyspace: string | null }[];
  };
  assert.equal(doc.tables.length, 3);
  assert.deepEqual(
    doc.tables.find((t) => t.name === 'plans'),
    { schema: 'public', name: 'plans', kind: 'reference', keyspace: null, keyColumn: null },
  );
});

test('table distribute into an unknown keyspace fails with one sentence', async () => {
  const r = await tessera(
    'table',
    'distribute',
    'public.x',
    '--column',
    'id',
    '--keyspace',
    'nosuch',
  );
  assert.equal(r.code, 1);
  assert.match(r.err, /^tessera: [^\n]*nosuch[^\n]*\n$/);
  const missing = await tessera('table', 'distribute', 'public.x', '--keyspace', 'tenants');
  assert.equal(missing.code, 2);
  assert.match(missing.err, /--column is required/);
});

test('status, human and JSON', async () => {
  const text = ok(await tessera('status'));
  assert.match(text, /^cluster \S+\s+epoch \d+\s+coordinator 127\.0\.0\.1:\d+$/m);
  for (const heading of ['Nodes', 'Keyspaces', 'Ranges', 'Tables', 'Routers'])
    assert.match(text, new RegExp(`^${heading}$`, 'm'));
  assert.match(text, /^data1\s+data\s+active\s+127\.0\.0\.1:\d+/m);
  assert.match(text, /\(no routers registered\)/);

  const doc = JSON.parse(ok(await tessera('status', '--json'))) as {
    epoch: string;
    clusterUid: string;
    nodes: { name: string; host: string; port: number }[];
    keyspaces: {
      name: string;
      type: string;
      seed: string;
      ranges: { lo: string; owner: string }[];
    }[];
    tables: unknown[];
    routers: unknown[];
  };
  assert.match(doc.epoch, /^\d+$/);
  assert.ok(doc.clusterUid.length > 0);
  assert.deepEqual(doc.nodes.map((n) => n.name).sort(), ['data1', 'data2', 'home']);
  assert.equal(doc.nodes.find((n) => n.name === 'home')?.port, (servers[0] as PgServer).port);
  assert.equal(doc.keyspaces.find((k) => k.name === 'tenants')?.ranges.length, 5);
  assert.equal(doc.tables.length, 3);
  assert.deepEqual(doc.routers, []);
});

test('unreachable coordinator: the hint, exit 1', async () => {
  const port = await freePort();
  const io = captureIo({}, cwd);
  const code = await main(['status', '--coordinator', `127.0.0.1:${port}`], io);
  assert.equal(code, 1);
  assert.equal(
    io.stderr,
    `tessera: cannot reach the coordinator at 127.0.0.1:${port} (is the cluster up? try \`tessera up\`)\n`,
  );
});

test('help on the program and on every command; unknown command and flag exit 2', async () => {
  const io = captureIo({}, cwd);
  assert.equal(await main(['--help'], io), 0);
  assert.match(io.stdout, /^Usage: tessera COMMAND/m);
  for (const path of [
    ['status'],
    ['nodes', 'add'],
    ['range', 'split'],
    ['table', 'distribute'],
    ['up'],
    ['down'],
  ]) {
    const h = captureIo({}, cwd);
    assert.equal(await main([...path, '--help'], h), 0, path.join(' '));
    assert.match(h.stdout, new RegExp(`^Usage:\\n  tessera ${path.join(' ')}`, 'm'));
    assert.match(h.stdout, /^Examples:$/m);
  }
  const unknown = captureIo({}, cwd);
  assert.equal(await main(['frobnicate'], unknown), 2);
  assert.equal(
    unknown.stderr,
    'tessera: unknown command "frobnicate"\nRun `tessera --help` for the list of commands.\n',
  );
  const flag = await tessera('status', '--verbose');
  assert.equal(flag.code, 2);
  assert.match(flag.err, /^tessera: unknown option --verbose\nUsage: tessera status \[--json\]/);
});
