// finishCommit against real Postgres nodes and a real coordinator: a node down at COMMIT PREPARED
// is committed by the retries once it is back, before finishCommit resolves (so an acknowledged
// COMMIT is visible everywhere); a gid recovery already finished counts as committed; a node that
// stays down past the deadline ends in CommitUnfinishedError (08007) and recovery finishes it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { grpcDecisionLog } from '@tessera/proto';
import { commitAcrossNodes, type PendingCommit } from './commit.js';
import { CommitUnfinishedError } from './errors.js';
import { finishCommit } from './finish.js';
import { newTxid } from './gid.js';
import {
  NODES,
  appliedOn,
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
  nodes = await startNodes('finish');
  cat = await startCatalog(nodes, 'finish');
});
after(async () => {
  await cat?.close();
  await nodes?.dispose();
});

/** COMMIT PREPARED on a new connection to the pending node, as the router does. */
const recommit = async (p: PendingCommit): Promise<void> => {
  const server = nodes.servers[NODES.indexOf(p.node as (typeof NODES)[number])]!;
  const c = new pg.Client({ connectionString: server.url('app'), connectionTimeoutMillis: 2000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query(`COMMIT PREPARED '${p.gid}'`);
  } finally {
    await c.end().catch(() => undefined);
  }
};

/** A commit across the three nodes with n3 stopped right after the decision. */
async function commitWithN3Down(txid: string): Promise<PendingCommit[]> {
  const txn = await openTxn(nodes, txid);
  try {
    const outcome = await commitAcrossNodes(txid, txn.participants, grpcDecisionLog(cat.txn), {
      clusterUid: cat.clusterUid,
      faultHook: async (p) => {
        if (p === 'after-decision') await nodes.servers[2]!.stop('immediate');
      },
    });
    // n3 is pending; on a slow machine the coordinator's recovery may have committed n1 or n2
    // before our COMMIT PREPARED reached them (42704 then: committed, finishCommit's case too).
    assert.ok(outcome.pending.some((p) => p.node === 'n3'));
    for (const p of outcome.pending)
      if (p.node !== 'n3')
        assert.equal((p.error as { code?: string }).code, '42704', String(p.error));
    return outcome.pending;
  } finally {
    await txn.end();
  }
}

test('a node down at COMMIT PREPARED is committed by the retries once it is back', async () => {
  const txid = newTxid('test');
  const pending = await commitWithN3Down(txid);
  const back = new Promise<void>((resolve, reject) => {
    setTimeout(() => nodes.servers[2]!.start().then(resolve, reject), 1500);
  });
  await finishCommit(txid, pending, recommit, { timeoutMs: 60_000 });
  // At the moment the client would be told COMMIT, every node shows the write.
  assert.equal(await appliedOn(nodes, txid), 3);
  assert.deepEqual(await preparedFor(nodes, txid), []);
  await back;
});

test('a gid already finished elsewhere (42704) counts as committed', async () => {
  const txid = newTxid('test');
  const pending = await commitWithN3Down(txid);
  await nodes.servers[2]!.start();
  for (const p of pending) await recommit(p).catch(() => undefined);
  let calls = 0;
  await finishCommit(
    txid,
    pending,
    async (p) => {
      calls++;
      await recommit(p);
    },
    { timeoutMs: 10_000 },
  );
  assert.equal(calls, pending.length, 'one attempt each: its 42704 means done');
  assert.equal(await appliedOn(nodes, txid), 3);
});

test('a node down past the deadline: 08007 naming it; recovery finishes the commit later', async () => {
  const txid = newTxid('test');
  const pending = await commitWithN3Down(txid);
  try {
    await assert.rejects(
      finishCommit(txid, pending, recommit, { timeoutMs: 800 }),
      (e: unknown) =>
        e instanceof CommitUnfinishedError &&
        e.sqlstate === '08007' &&
        e.nodes.includes('n3') &&
        /is committed, but node "n3" did not confirm COMMIT PREPARED within 800 ms/.test(e.message),
    );
  } finally {
    await nodes.servers[2]!.start();
  }
  await until('recovery committed n3', async () => (await appliedOn(nodes, txid)) === 3);
});
