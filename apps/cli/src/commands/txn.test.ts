// `tessera txn list|resolve` in-process through main(), against a real coordinator (its recovery
// loop off, so only these commands settle anything) and two real nodes holding transactions
// prepared by hand with this cluster's gids.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import { startCoordinator, type RunningCoordinator } from '@tessera/coordinator';
import { main } from '../cli.js';
import { captureIo } from '../io.js';

let servers: PgServer[] = [];
let coordinator: RunningCoordinator;
let cwd: string;
let uid = '';

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

const server = (i: number) => servers[i] as PgServer;

async function prepare(i: number, txid: string, id: number): Promise<void> {
  const c = await server(i).connect('app');
  try {
    await c.query('begin');
    await c.query('insert into items values ($1)', [id]);
    await c.query(`prepare transaction 'tessera:${uid}:${txid}:n${i + 1}'`);
  } finally {
    await c.end();
  }
}

async function ids(i: number): Promise<number[]> {
  const rows = await server(i).query<{ id: number }>('select id from items order by id', [], 'app');
  return rows.map((r) => r.id);
}

before(async () => {
  servers = await startPostgresCluster(2, { name: 'clitxn' });
  await server(0).query('create database tessera');
  for (const s of servers) {
    await s.query('create database app');
    await s.query('create table items (id int primary key)', [], 'app');
  }
  coordinator = await startCoordinator({
    catalogUrl: server(0).url('tessera'),
    listen: '127.0.0.1:0',
    metricsPort: 0,
    standbyPollMs: 100,
    recoveryGraceMs: 60_000,
    recoveryIntervalMs: 0,
    logLevel: 'silent',
  });
  await coordinator.whenActive;
  cwd = mkdtempSync(join(tmpdir(), 'tessera-cli-txn-'));
  ok(await tessera('nodes', 'add', 'n1', `127.0.0.1:${server(0).port}`, '--home'));
  ok(await tessera('nodes', 'add', 'n2', `127.0.0.1:${server(1).port}`));
  uid = (JSON.parse(ok(await tessera('status', '--json'))) as { clusterUid: string }).clusterUid;
});

after(async () => {
  await coordinator?.stop();
  for (const s of servers) {
    const left = await s
      .query<{ gid: string }>('select gid from pg_prepared_xacts')
      .catch(() => []);
    for (const r of left)
      await s.query(`rollback prepared '${r.gid}'`, [], 'app').catch(() => undefined);
    await s.dispose();
  }
  rmSync(cwd, { recursive: true, force: true });
});

test('txn list: gid, node, logged decision and age, as text and JSON', async () => {
  assert.equal(ok(await tessera('txn', 'list')), '(no in-doubt transactions)\n');
  await prepare(0, 'tx-c', 1);
  await prepare(1, 'tx-c', 1);
  await prepare(0, 'tx-u', 2);
  // A commit decision, logged the way a router does it.
  const { createClient, TxnService, Decision } = await import('@tessera/proto');
  const txn = createClient(TxnService, coordinator.address);
  await txn.decide({ txid: 'tx-c', decision: Decision.COMMIT, participants: ['n1', 'n2'] });
  txn.close();

  const text = ok(await tessera('txn', 'list'));
  assert.match(text, /^TXID\s+NODE\s+DECISION\s+AGE\s+GID$/m);
  assert.match(text, new RegExp(`^tx-c\\s+n1\\s+commit\\s+\\d+s\\s+tessera:${uid}:tx-c:n1$`, 'm'));
  assert.match(text, /^tx-c\s+n2\s+commit\s/m);
  assert.match(text, /^tx-u\s+n1\s+none\s/m);
  const doc = JSON.parse(ok(await tessera('txn', 'list', '--json'))) as {
    txns: {
      txid: string;
      node: string;
      decision: string;
      gid: string;
      preparedMs: string;
      ageMs: number;
    }[];
  };
  assert.deepEqual(
    doc.txns.map((t) => [t.txid, t.node, t.decision]),
    [
      ['tx-c', 'n1', 'commit'],
      ['tx-c', 'n2', 'commit'],
      ['tx-u', 'n1', 'none'],
    ],
  );
  assert.match(doc.txns[0]?.preparedMs ?? '', /^\d+$/);
  assert.equal(typeof doc.txns[0]?.ageMs, 'number');
});

test('txn resolve needs --yes when stdin is not a terminal, and a well-formed TXID (exit 2)', async (t) => {
  if (process.stdin.isTTY) return t.skip('stdin is a terminal here');
  const r = await tessera('txn', 'resolve');
  assert.equal(r.code, 2);
  assert.match(r.err, /^tessera: txn resolve changes data on the nodes: pass --yes to confirm\n/);
  assert.match(r.err, /Usage: tessera txn resolve \[TXID\] \[--yes\]/);
  const bad = await tessera('txn', 'resolve', 'a:b', '--yes');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /"a:b" is not a txid/);
  assert.equal((await tessera('txn', 'resolve', 'x', 'y', '--yes')).code, 2);
});

test('txn resolve --yes (all): the logged commit is applied, the young undecided one is left', async () => {
  const out = ok(await tessera('txn', 'resolve', '--yes'));
  assert.match(out, /^committed 2, rolled back 0 prepared transaction\(s\)$/m);
  assert.match(out, /^1 still in doubt/m);
  assert.deepEqual(await ids(0), [1]);
  assert.deepEqual(await ids(1), [1]);
});

test('txn resolve TXID --yes forces it: the undecided one is aborted now', async () => {
  assert.equal(
    ok(await tessera('txn', 'resolve', 'tx-u', '-y')),
    'committed 0, rolled back 1 prepared transaction(s)\n',
  );
  assert.equal(ok(await tessera('txn', 'list')), '(no in-doubt transactions)\n');
  assert.deepEqual(await ids(0), [1]);
  const { createClient, TxnService, Decision } = await import('@tessera/proto');
  const txn = createClient(TxnService, coordinator.address);
  assert.equal(
    (await txn.getDecision({ txid: 'tx-u' })).decision,
    Decision.ABORT,
    'abort was logged',
  );
  txn.close();
});

test('txn commands against no coordinator fail with one sentence, exit 1; help lists the group', async () => {
  const io = captureIo({}, cwd);
  const code = await main(['txn', 'list', '--coordinator', '127.0.0.1:1'], io);
  assert.equal(code, 1);
  assert.match(io.stderr, /^tessera: cannot reach the coordinator at 127\.0\.0\.1:1/);
  const help = captureIo({}, cwd);
  assert.equal(await main(['txn', '--help'], help), 0);
  assert.match(help.stdout, /tessera txn list \[--json\]/);
  assert.match(help.stdout, /tessera txn resolve \[TXID\] \[--yes\]/);
});
