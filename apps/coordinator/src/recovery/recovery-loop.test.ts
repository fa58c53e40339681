// The background recovery loop on real nodes: transactions prepared by hand with this cluster's
// gids are committed iff a commit is logged, undecided ones aborted (abort logged first) only after
// the grace period, a node that is down holds up nobody else and is finished when it is back, and
// finished decision rows are deleted only when no participant can still need them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Decision, NodeRole } from '@tessera/proto';
import { startPostgresCluster } from '@tessera/testkit';
import {
  freshDatabase,
  startTestCoordinator,
  type PgServer,
  type TestCoordinator,
} from '../testing.js';

const GRACE_MS = 1500;
const RETENTION_MS = 3000;

let servers: PgServer[];
let t: TestCoordinator;
let uid: string;
const node = (i: number): PgServer => servers[i] as PgServer;

before(async () => {
  servers = await startPostgresCluster(3, { name: 'recovery' });
  t = await startTestCoordinator(await freshDatabase(node(0)), {
    recoveryGraceMs: GRACE_MS,
    recoveryIntervalMs: 150,
    decisionRetentionMs: RETENTION_MS,
  });
  for (const [i, s] of servers.entries()) {
    await t.admin.addNode({
      name: `n${i + 1}`,
      host: '127.0.0.1',
      port: s.port,
      role: i === 0 ? NodeRole.HOME : NodeRole.DATA,
    });
    await s.query('create database app');
    await s.query('create table items (id int primary key)', [], 'app');
  }
  await t.admin.addNode({ name: 'down', host: '127.0.0.1', port: 1 });
  uid = (await t.catalog.getCatalog({})).clusterUid;
});

after(async () => {
  await t?.stop();
  for (const s of servers ?? []) {
    for (const r of await s
      .query<{ gid: string }>('select gid from pg_prepared_xacts')
      .catch(() => []))
      await s.query(`rollback prepared '${r.gid}'`, [], 'app').catch(() => undefined);
    await s.dispose();
  }
});

const gid = (txid: string, n: number): string => `tessera:${uid}:${txid}:n${n}`;

/** Prepares `txid` on node n (1-based), inserting `id` into app.items. */
async function prepare(txid: string, n: number, id: number, gidText = gid(txid, n)): Promise<void> {
  const c = await node(n - 1).connect('app');
  try {
    await c.query('begin');
    await c.query('insert into items values ($1)', [id]);
    await c.query(`prepare transaction '${gidText}'`);
  } finally {
    await c.end();
  }
}

async function preparedGids(): Promise<string[]> {
  const all = await Promise.all(
    servers.map((s) =>
      s.query<{ gid: string }>('select gid from pg_prepared_xacts').catch(() => []),
    ),
  );
  return all
    .flat()
    .map((r) => r.gid)
    .sort();
}

async function ids(n: number): Promise<number[]> {
  const rows = await node(n - 1).query<{ id: number }>(
    'select id from items order by id',
    [],
    'app',
  );
  return rows.map((r) => r.id);
}

async function until(
  what: string,
  cond: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

async function metric(line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${t.coordinator.metricsPort}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? NaN : Number(m.split(' ').pop());
}

test('logged commit -> committed, logged abort -> rolled back, undecided -> aborted after grace', async () => {
  const foreign = `tessera:some-other-cluster:tx-x:n1`;
  await prepare('tx-x', 1, 900, foreign);
  await prepare('tx-u', 2, 30);
  await prepare('tx-u', 3, 30);
  const undecidedAt = Date.now();
  await prepare('tx-c', 1, 10);
  await prepare('tx-c', 2, 10);
  await t.txn.decide({ txid: 'tx-c', decision: Decision.COMMIT, participants: ['n1', 'n2'] });
  await prepare('tx-a', 1, 20);
  await prepare('tx-a', 3, 20);
  await t.txn.decide({ txid: 'tx-a', decision: Decision.ABORT, participants: ['n1', 'n3'] });

  await until('the decided ones are finished', async () => {
    const left = await preparedGids();
    return !left.some((g) => g.includes(':tx-c:') || g.includes(':tx-a:'));
  });
  if (Date.now() - undecidedAt < GRACE_MS - 200)
    assert.deepEqual(
      (await preparedGids()).filter((g) => g.includes(':tx-u:')),
      [gid('tx-u', 2), gid('tx-u', 3)],
      'undecided transactions wait out the grace period',
    );
  await until('only the other cluster is left', async () => {
    return JSON.stringify(await preparedGids()) === JSON.stringify([foreign]);
  });
  assert.ok(Date.now() - undecidedAt >= GRACE_MS - 100, 'not aborted before the grace period');
  assert.equal(
    (await t.txn.getDecision({ txid: 'tx-u' })).decision,
    Decision.ABORT,
    'abort logged',
  );
  assert.deepEqual(await ids(1), [10]);
  assert.deepEqual(await ids(2), [10]);
  assert.deepEqual(await ids(3), []);
  await node(0).query(`rollback prepared '${foreign}'`, [], 'app');

  assert.equal(await metric(/^tessera_txn_recovered_total\{outcome="commit"/), 2);
  assert.equal(await metric(/^tessera_txn_recovered_total\{outcome="abort"/), 4);
  assert.ok((await metric(/^tessera_txn_recovery_node_errors_total\{node="down"/)) >= 1);
  assert.equal(await metric(/^tessera_txn_in_doubt[ {]/), 0);
});

test('a router that decides commit after recovery gave up is told abort', async () => {
  await prepare('tx-late', 1, 40);
  await prepare('tx-late', 2, 40);
  await until('recovery aborted it', async () => (await preparedGids()).length === 0);
  const res = await t.txn.decide({
    txid: 'tx-late',
    decision: Decision.COMMIT,
    participants: ['n1', 'n2'],
  });
  assert.equal(res.decision, Decision.ABORT, 'the first decision logged wins');
  assert.deepEqual(await ids(1), [10]);
});

test('a node that is down holds up nobody and is finished once it is back', async () => {
  await prepare('tx-s', 1, 50);
  await prepare('tx-s', 3, 50);
  await node(2).stop();
  try {
    await t.txn.decide({ txid: 'tx-s', decision: Decision.COMMIT, participants: ['n1', 'n3'] });
    await until('n1 committed', async () => (await ids(1)).includes(50));
    await sleep(500);
    assert.equal((await t.txn.getDecision({ txid: 'tx-s' })).decision, Decision.COMMIT);
    assert.equal(
      await metric(/^tessera_txn_in_doubt[ {]/),
      0,
      'n3 is unreadable, so nothing is seen',
    );
  } finally {
    await node(2).start();
  }
  await until('n3 committed after its restart', async () => (await ids(3)).includes(50));
  assert.deepEqual(await preparedGids(), []);
});

test('finished decisions are deleted after the retention, unless a participant is unreadable', async () => {
  await t.txn.decide({ txid: 'tx-down', decision: Decision.COMMIT, participants: ['n1', 'down'] });
  await t.txn.decide({ txid: 'tx-none', decision: Decision.COMMIT, participants: [] });
  // The rows of the earlier tests are older than the retention by now, or soon will be.
  await until(
    'the finished rows are deleted',
    async () => {
      for (const txid of ['tx-c', 'tx-a', 'tx-u', 'tx-late', 'tx-s']) {
        const gone = await t.txn.getDecision({ txid }).then(
          () => false,
          () => true,
        );
        if (!gone) return false;
      }
      return true;
    },
    RETENTION_MS + 10_000,
  );
  await sleep(RETENTION_MS + 500);
  assert.equal(
    (await t.txn.getDecision({ txid: 'tx-down' })).decision,
    Decision.COMMIT,
    'kept: node "down" could not be read, so it may still hold a gid',
  );
  assert.equal(
    (await t.txn.getDecision({ txid: 'tx-none' })).decision,
    Decision.COMMIT,
    'kept: a commit without participants cannot be proven finished',
  );
});
