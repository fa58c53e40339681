// `tessera up` with replicas, end to end: every node (home included) gets a synchronous streaming
// replica and an agent per instance, two coordinators run, and status shows it all. Replicas ask
// for passwords like their primaries. SIGKILL of a data node's primary fails it over to its
// replica; `nodes rejoin` brings the old one back with the agent's password; `down` leaves no
// process behind.
import { after, before, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { stopServer } from '@tessera/pgctl';
import { LOCAL_NODES, layout, readClusterFile, readStateFile, type ClusterFile } from './layout.js';
import { runCli } from './run-cli.testutil.js';
import type { ClusterPasswords } from './passwords.js';

let root: string;
let dir: string;
const tessera = (...argv: string[]) => runCli(root, ...argv);

before(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-up-replicas-'));
  chmodSync(root, 0o755);
  dir = join(root, 'cluster');
});

after(async () => {
  await tessera('down', '--dir', dir);
  rmSync(root, { recursive: true, force: true });
});

interface StatusDoc {
  nodes: {
    name: string;
    address: string;
    degraded: boolean;
    replicas: { address: string; state: string; streaming: { syncState: string } | null }[];
  }[];
  agents: { node: string; address: string; role: string; fenced: boolean }[];
}

let cluster: ClusterFile;

const coordinators = () =>
  `127.0.0.1:${cluster.coordinatorPort},127.0.0.1:${cluster.standbyCoordinatorPort}`;

async function status(): Promise<StatusDoc> {
  const r = await tessera('status', '--json', '--coordinator', coordinators());
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as StatusDoc;
}

async function until(what: string, timeoutMs: number, pred: (s: StatusDoc) => boolean) {
  const deadline = Date.now() + timeoutMs;
  let last: StatusDoc | undefined;
  for (;;) {
    try {
      last = await status();
      if (pred(last)) return last;
    } catch {
      // between coordinators
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last?.nodes)}`);
    await sleep(300);
  }
}

test(
  'up: every node with a synchronous replica, an agent per instance, two coordinators',
  { timeout: 180_000 },
  async () => {
    const r = await tessera('up', '--dir', dir);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /replicas: +home +127\.0\.0\.1:\d+ \(synchronous, streaming\)/);
    assert.match(r.out, /\(standby; clients are given both\)/);
    cluster = readClusterFile(layout(dir)) as ClusterFile;
    assert.equal(cluster.replicas, true);
    // Agents report every second; on a loaded machine the last one may lag the replicas.
    const s = await until(
      'every replica to be synchronous and every agent to report',
      90_000,
      (d) =>
        d.agents.length === 6 &&
        d.nodes.every((n) => n.replicas.length === 1 && n.replicas[0]!.state === 'sync'),
    );
    assert.deepEqual(s.nodes.map((n) => n.name).sort(), ['data1', 'data2', 'home']);
    for (const n of s.nodes) assert.equal(n.replicas[0]?.streaming?.syncState, 'sync');
    assert.equal(s.agents.length, 6);
    assert.equal(s.agents.filter((a) => a.role === 'primary').length, 3);
    assert.equal(s.agents.filter((a) => a.role === 'standby').length, 3);
    const state = readStateFile(layout(dir));
    assert.equal(Object.keys(state?.nodes ?? {}).length, 6);
    assert.ok(
      state && 'coordinator-2' in state.services && 'agent-data1-replica' in state.services,
    );
    const text = await tessera('status', '--coordinator', coordinators());
    assert.match(text.out, /^Replication$/m);
    assert.match(text.out, /^Agents$/m);
  },
);

/** The SQLSTATE a superuser login to `port` with `password` fails with ('' when it succeeds). */
async function loginError(port: number, password: string): Promise<string> {
  const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password });
  try {
    await c.connect();
    await c.query('select 1');
    return '';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  } finally {
    await c.end().catch(() => undefined);
  }
}

test('every replica asks for the password: 28P01 for a wrong one', async () => {
  const pw = JSON.parse(readFileSync(layout(dir).passwordsFile, 'utf8')) as ClusterPasswords;
  for (const n of LOCAL_NODES) {
    const port = cluster.replicaPorts![n.name];
    assert.equal(await loginError(port, 'wrong'), '28P01', `replica of ${n.name}`);
    assert.equal(await loginError(port, pw.postgres), '', `replica of ${n.name}`);
  }
});

test(
  'SIGKILL of a data primary under tessera up: its replica takes over, the old one is fenced',
  { timeout: 120_000 },
  async (t) => {
    const before = await status();
    const data1 = before.nodes.find((n) => n.name === 'data1')!;
    const killedAt = Date.now();
    await stopServer(layout(dir).nodeDataDir('data1'), 'kill');
    const after = await until('data1 to fail over', 30_000, (d) => {
      const n = d.nodes.find((x) => x.name === 'data1')!;
      return n.address !== data1.address;
    });
    const n = after.nodes.find((x) => x.name === 'data1')!;
    assert.equal(n.address, data1.replicas[0]!.address);
    assert.deepEqual(
      n.replicas.map((r) => [r.address, r.state]),
      [[data1.address, 'fenced']],
    );
    assert.equal(n.degraded, true);
    t.diagnostic(`data1 failed over in ${Date.now() - killedAt} ms`);
  },
);

test(
  'nodes rejoin: the agent rewinds the fenced former primary onto the new one, with the password',
  { timeout: 180_000 },
  async () => {
    const r = await tessera('nodes', 'rejoin', 'data1', '--coordinator', coordinators());
    assert.equal(r.code, 0, `${r.out}${r.err}`);
    assert.match(r.out, /is a synchronous replica of data1 again/);
  },
);

test('down stops every instance, agent and coordinator', { timeout: 90_000 }, async () => {
  const r = await tessera('down', '--dir', dir);
  assert.equal(r.code, 0, r.err);
  let left: string[] = [];
  try {
    left = execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    left = [];
  }
  assert.deepEqual(left, []);
});
