// The protocol's order of steps and its choices, on in-memory participants that record what they
// are asked (the seam, not Postgres; the real thing is in commit.test.ts and kill-matrix.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commitAcrossNodes } from './commit.js';
import { InDoubtError } from './errors.js';
import type { DecisionLog, DecisionText, Participant } from './participant.js';

function recorder(calls: string[], node: string, failPrepare?: Error): Participant {
  return {
    node,
    prepare: async (gid) => {
      calls.push(`prepare ${gid}`);
      if (failPrepare) throw failPrepare;
    },
    commitPrepared: async (gid) => void calls.push(`commit ${gid}`),
    rollbackPrepared: async (gid) => void calls.push(`rollback-prepared ${gid}`),
    rollback: async () => void calls.push(`rollback ${node}`),
  };
}

function logOf(calls: string[], answer: DecisionText | Error): DecisionLog {
  return {
    decide: async (txid, decision, participants) => {
      calls.push(`decide ${txid} ${decision} ${participants.join(',')}`);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

const OPTS = { clusterUid: 'c1' };

test('prepare everywhere, decide commit once, then commit everywhere', async () => {
  const calls: string[] = [];
  const out = await commitAcrossNodes(
    't1',
    [recorder(calls, 'a'), recorder(calls, 'b')],
    logOf(calls, 'commit'),
    OPTS,
  );
  assert.deepEqual(calls, [
    'prepare tessera:c1:t1:a',
    'prepare tessera:c1:t1:b',
    'decide t1 commit a,b',
    'commit tessera:c1:t1:a',
    'commit tessera:c1:t1:b',
  ]);
  assert.deepEqual(out, {
    txid: 't1',
    participants: ['a', 'b'],
    committed: ['a', 'b'],
    pending: [],
  });
});

test("a failed PREPARE: the node's own error, prepared ones rolled back, abort logged", async () => {
  const calls: string[] = [];
  const err = Object.assign(new Error('duplicate key'), { code: '23505' });
  await assert.rejects(
    commitAcrossNodes(
      't2',
      [recorder(calls, 'a'), recorder(calls, 'b', err)],
      logOf(calls, 'abort'),
      OPTS,
    ),
    (e) => e === err,
  );
  assert.deepEqual(calls.slice(2).sort(), [
    'decide t2 abort a,b',
    'rollback b',
    'rollback-prepared tessera:c1:t2:a',
  ]);
});

test('a log that fails is in doubt: nothing rolled back', async () => {
  const calls: string[] = [];
  await assert.rejects(
    commitAcrossNodes('t3', [recorder(calls, 'a')], logOf(calls, new Error('UNAVAILABLE')), OPTS),
    (e) => e instanceof InDoubtError && e.sqlstate === '08007' && /UNAVAILABLE/.test(e.message),
  );
  assert.deepEqual(calls, ['prepare tessera:c1:t3:a', 'decide t3 commit a']);
});

test('a fault hook that throws abandons the commit where it is, as a crash would', async () => {
  const calls: string[] = [];
  const boom = new Error('boom');
  await assert.rejects(
    commitAcrossNodes('t4', [recorder(calls, 'a'), recorder(calls, 'b')], logOf(calls, 'commit'), {
      ...OPTS,
      faultHook: (p) => {
        if (p === 'after-prepare:b') throw boom;
      },
    }),
    (e) => e === boom,
  );
  assert.deepEqual(calls, ['prepare tessera:c1:t4:a', 'prepare tessera:c1:t4:b']);
});

test('bad input is refused before any side effect', async () => {
  const calls: string[] = [];
  const two = [recorder(calls, 'a'), recorder(calls, 'a')];
  await assert.rejects(commitAcrossNodes('t5', two, logOf(calls, 'commit'), OPTS), /appears twice/);
  await assert.rejects(
    commitAcrossNodes('bad:txid', [recorder(calls, 'a')], logOf(calls, 'commit'), OPTS),
    /not usable in a gid/,
  );
  assert.deepEqual(calls, []);
});

test('a gid gone at COMMIT PREPARED after a logged commit is committed (recovery got there first); other errors stay pending', async () => {
  const calls: string[] = [];
  const gone = recorder(calls, 'a');
  gone.commitPrepared = async () => {
    throw Object.assign(new Error('prepared transaction does not exist'), { code: '42704' });
  };
  const down = recorder(calls, 'b');
  down.commitPrepared = async () => {
    throw Object.assign(new Error('connection lost'), { code: '08006' });
  };
  const out = await commitAcrossNodes('t9', [gone, down], logOf(calls, 'commit'), OPTS);
  assert.deepEqual(out.committed, ['a']);
  assert.deepEqual(
    out.pending.map((p) => p.node),
    ['b'],
  );
});
