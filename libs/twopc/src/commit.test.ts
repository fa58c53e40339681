// commitAcrossNodes against three real Postgres nodes (pg clients as participants) and a real
// coordinator process as the decision log: the happy path, a deferred unique violation at PREPARE,
// an unreachable coordinator (in doubt, then settled by recovery), an abort logged first, and a
// node that dies after the decision (committed anyway, finished by recovery).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TxnService, createClient, Decision, grpcDecisionLog } from '@tessera/proto';
import { commitAcrossNodes } from './commit.js';
import { CommitAbortedError, InDoubtError } from './errors.js';
import { newTxid } from './gid.js';
import {
  appliedOn,
  loggedDecision,
  openTxn,
  preparedFor,
  startCatalog,
  startNodes,
  until,
  type Catalog,
  type Nodes,
} from './testing/cluster.js';

let nodes: Nodes;
let cat: Catalog;

before(async () => {
  nodes = await startNodes('twopc');
  cat = await startCatalog(nodes, 'commit');
});
after(async () => {
  await cat?.close();
  await nodes?.dispose();
});

const log = () => grpcDecisionLog(cat.txn);

test('happy path: prepared everywhere, commit logged, committed everywhere', async () => {
  const txid = newTxid('test');
  const txn = await openTxn(nodes, txid);
  const points: string[] = [];
  try {
    const outcome = await commitAcrossNodes(txid, txn.participants, log(), {
      clusterUid: cat.clusterUid,
      faultHook: (p) => void points.push(p),
    });
    assert.deepEqual(outcome.committed.sort(), ['n1', 'n2', 'n3']);
    assert.deepEqual(outcome.pending, []);
  } finally {
    await txn.end();
  }
  assert.equal(await appliedOn(nodes, txid), 3);
  assert.deepEqual(await preparedFor(nodes, txid), []);
  assert.equal(await loggedDecision(cat.txn, txid), 'commit');
  assert.equal(points[0], 'before-prepare');
  assert.equal(points.filter((p) => p.startsWith('after-prepare:')).length, 3);
  assert.equal(points[4], 'after-decision');
  assert.equal(points.filter((p) => p.startsWith('after-commit:')).length, 3);
  assert.equal(points.at(-1), 'after-all');
});

test('a deferred unique violation at PREPARE reaches the caller as 23505; nothing is left anywhere', async () => {
  await nodes.servers[1]!.query('insert into u values (7)', [], 'app');
  const txid = newTxid('test');
  const txn = await openTxn(nodes, txid, async (c, node) => {
    if (node === 'n2') await c.query('insert into u values (7)'); // checked only at PREPARE
  });
  try {
    await assert.rejects(
      commitAcrossNodes(txid, txn.participants, log(), { clusterUid: cat.clusterUid }),
      (e: unknown) => {
        assert.equal((e as { code?: string }).code, '23505', String(e));
        assert.match(String((e as Error).message), /u_k/);
        return true;
      },
    );
    // The sessions are usable again: nothing is open on them.
    for (const c of txn.clients)
      assert.deepEqual((await c.query('select 1 as x')).rows, [{ x: 1 }]);
  } finally {
    await txn.end();
  }
  assert.equal(await appliedOn(nodes, txid), 0);
  assert.deepEqual(await preparedFor(nodes, txid), []);
  assert.equal(await loggedDecision(cat.txn, txid), 'abort', 'abort logged, best effort');
});

test('an unreachable coordinator at decision time is 08007, and recovery settles it later', async () => {
  const txid = newTxid('test');
  const txn = await openTxn(nodes, txid);
  const nowhere = createClient(TxnService, '127.0.0.1:1', { deadlineMs: 1_000 });
  try {
    await assert.rejects(
      commitAcrossNodes(txid, txn.participants, grpcDecisionLog(nowhere), {
        clusterUid: cat.clusterUid,
      }),
      (e: unknown) => {
        assert.ok(e instanceof InDoubtError, String(e));
        assert.equal(e.sqlstate, '08007');
        assert.deepEqual([...e.participants].sort(), ['n1', 'n2', 'n3']);
        return true;
      },
    );
    assert.equal((await preparedFor(nodes, txid)).length, 3, 'left prepared for recovery');
  } finally {
    nowhere.close();
    await txn.end();
  }
  // Nothing was logged, so after the grace period recovery logs abort and rolls back.
  await until('recovery settled it', async () => (await preparedFor(nodes, txid)).length === 0);
  assert.equal(await loggedDecision(cat.txn, txid), 'abort');
  assert.equal(await appliedOn(nodes, txid), 0);
});

test('an abort logged first wins: everything is rolled back and the caller gets 40001', async () => {
  const txid = newTxid('test');
  await cat.txn.decide({ txid, decision: Decision.ABORT, participants: ['n1', 'n2', 'n3'] });
  const txn = await openTxn(nodes, txid);
  try {
    await assert.rejects(
      commitAcrossNodes(txid, txn.participants, log(), { clusterUid: cat.clusterUid }),
      (e: unknown) => {
        assert.ok(e instanceof CommitAbortedError, String(e));
        assert.equal(e.sqlstate, '40001');
        assert.match(e.message, /already logged an abort/);
        return true;
      },
    );
  } finally {
    await txn.end();
  }
  assert.equal(await appliedOn(nodes, txid), 0);
  assert.deepEqual(await preparedFor(nodes, txid), []);
});

test('a node lost after the decision: still a commit (reported pending), finished by recovery', async () => {
  const txid = newTxid('test');
  const txn = await openTxn(nodes, txid);
  const n3 = nodes.servers[2]!;
  try {
    const outcome = await commitAcrossNodes(txid, txn.participants, log(), {
      clusterUid: cat.clusterUid,
      faultHook: async (p) => {
        if (p === 'after-decision') await n3.stop('immediate');
      },
    });
    assert.deepEqual(outcome.committed.sort(), ['n1', 'n2']);
    assert.deepEqual(
      outcome.pending.map((p) => p.node),
      ['n3'],
    );
  } finally {
    await txn.end();
    await n3.start();
  }
  await until('recovery committed n3', async () => (await appliedOn(nodes, txid)) === 3);
  assert.deepEqual(await preparedFor(nodes, txid), []);
});

test('a decision that would come too late is an abort', async () => {
  const txid = newTxid('test');
  const txn = await openTxn(nodes, txid);
  try {
    await assert.rejects(
      commitAcrossNodes(txid, txn.participants, log(), {
        clusterUid: cat.clusterUid,
        decideDeadlineMs: 0,
        faultHook: async (p) => {
          if (p.startsWith('after-prepare:')) await new Promise((r) => setTimeout(r, 5));
        },
      }),
      (e: unknown) => e instanceof CommitAbortedError && /longer than the 0 ms/.test(e.message),
    );
  } finally {
    await txn.end();
  }
  assert.equal(await loggedDecision(cat.txn, txid), 'abort');
  assert.equal(await appliedOn(nodes, txid), 0);
  assert.deepEqual(await preparedFor(nodes, txid), []);
});
