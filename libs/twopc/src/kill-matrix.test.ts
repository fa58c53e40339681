// The kill matrix (issue 5's first acceptance check, without the router): a transaction on three
// real nodes is committed by commitAcrossNodes in a child process that SIGKILLs itself at each
// fault point, or whose coordinator is SIGKILLed around the decision. After the coordinator's
// recovery has run: the rows are on every node iff a commit decision was logged, nothing is left in
// pg_prepared_xacts, and nothing the child reported before dying contradicts the outcome.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { TxnService, createClient, type Client } from '@tessera/proto';
import { newTxid } from './gid.js';
import type { FaultPoint } from './participant.js';
import type { ChildSpec } from './testing/commit-child.js';
import {
  CHILD_APP,
  GRACE_MS,
  INTERVAL_MS,
  NODES,
  appliedOn,
  loggedDecision,
  preparedFor,
  sessionsOf,
  startCatalog,
  startNodes,
  until,
  type Catalog,
  type Nodes,
} from './testing/cluster.js';
import { spawnCoordinator, type CoordinatorProcess } from './testing/coordinator-process.js';

/** A recovery grace no test run reaches: for tests where recovery must not decide. */
const LONG_GRACE_MS = 120_000;

const CHILD = fileURLToPath(new URL('./testing/commit-child.ts', import.meta.url));

let nodes: Nodes;
let cat: Catalog;
const extra: { close(): Promise<void> }[] = [];

before(async () => {
  nodes = await startNodes('kill');
  cat = await startCatalog(nodes, 'kill');
});
after(async () => {
  for (const x of extra) await x.close().catch(() => undefined);
  await cat?.close();
  await nodes?.dispose();
});

interface ChildRun {
  lines: string[];
  /** Resolves with the first line starting with `prefix`. */
  waitFor(prefix: string): Promise<string>;
  send(line: string): void;
  /** Resolves with the signal that ended it, or null for a normal exit. */
  exited: Promise<NodeJS.Signals | null>;
}

function runChild(spec: ChildSpec): ChildRun {
  const child = spawn(
    process.execPath,
    ['--conditions=development', '--import', 'tsx', CHILD, JSON.stringify(spec)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  // Its stderr is forwarded, not inherited: a process left running must not hold the test
  // runner's output open (which keeps the runner waiting with nothing printed).
  child.stderr!.pipe(process.stderr);
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (l: string) => void }[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.filter((w) => line.startsWith(w.prefix))) w.resolve(line);
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  return {
    lines,
    waitFor: (prefix) =>
      new Promise<string>((resolve, reject) => {
        const seen = lines.find((l) => l.startsWith(prefix));
        if (seen !== undefined) return resolve(seen);
        waiters.push({ prefix, resolve });
        void exited.then(() =>
          setImmediate(() =>
            reject(new Error(`child exited before "${prefix}": ${lines.join(' | ')}`)),
          ),
        );
      }),
    send: (line) => void child.stdin.write(`${line}\n`),
    exited,
  };
}

function spec(clusterUid: string, txid: string, more: Partial<ChildSpec>): ChildSpec {
  return {
    txid,
    clusterUid,
    nodes: nodes.servers.map((s, i) => ({ name: NODES[i] as string, port: s.port })),
    coordinators: [cat.coordinator.address],
    ...more,
  };
}

/**
 * Waits for the child's sessions to be gone and recovery to have settled `txid`, then checks the
 * outcome against the log and against what the child reported. Returns the logged decision.
 */
async function settled(
  txn: Client<typeof TxnService>,
  txid: string,
  run: ChildRun,
): Promise<'commit' | 'abort' | 'none'> {
  await run.exited;
  // A PREPARE the child sent just before dying may still be running; wait for its backend to end.
  await until(
    'the child sessions are gone',
    async () => (await sessionsOf(nodes, CHILD_APP)) === 0,
  );
  await until(
    'recovery left nothing prepared',
    async () => (await preparedFor(nodes, txid)).length === 0,
  );
  const decision = await loggedDecision(txn, txid);
  const applied = await appliedOn(nodes, txid);
  const told = run.lines.join(' | ');
  assert.equal(
    applied,
    decision === 'commit' ? 3 : 0,
    `applied on ${applied} nodes, logged ${decision}; child: ${told}`,
  );
  const said = (prefix: string) => run.lines.some((l) => l.startsWith(prefix));
  if (said('outcome: committed') || said('decision: commit') || said('point: after-commit:'))
    assert.equal(decision, 'commit', `the child saw a commit, the log says ${decision}: ${told}`);
  if (said('outcome: error'))
    assert.notEqual(decision, 'commit', `the child was told error: ${told}`);
  return decision;
}

const KILL_POINTS: [FaultPoint | 'after-outcome', 'commit' | 'not-commit'][] = [
  ['before-prepare', 'not-commit'],
  ['after-prepare:n1', 'not-commit'],
  ['after-prepare:n2', 'not-commit'],
  ['after-prepare:n3', 'not-commit'],
  ['after-decision', 'commit'],
  ['after-commit:n1', 'commit'],
  ['after-commit:n2', 'commit'],
  ['after-commit:n3', 'commit'],
  ['after-all', 'commit'],
  ['after-outcome', 'commit'],
];

for (const [killAt, expected] of KILL_POINTS) {
  test(`the committing process is SIGKILLed at ${killAt}`, async () => {
    const txid = newTxid('kill');
    const run = runChild(spec(cat.clusterUid, txid, { killAt }));
    assert.equal(await run.exited, 'SIGKILL', run.lines.join(' | '));
    assert.ok(
      run.lines.includes(`point: ${killAt}`) || killAt === 'after-outcome',
      run.lines.join(' | '),
    );
    if (killAt.startsWith('after-prepare:'))
      assert.ok(
        (await preparedFor(nodes, txid)).length >= 1,
        'something was left prepared for recovery (the grace period has not passed yet)',
      );
    const decision = await settled(cat.txn, txid, run);
    if (expected === 'commit') assert.equal(decision, 'commit');
    else assert.notEqual(decision, 'commit');
  });
}

/** A standby (or a restart) of `c`'s coordinator, with a TxnService client; closed after the file. */
async function another(
  c: Catalog,
  graceMs = GRACE_MS,
): Promise<{ proc: CoordinatorProcess; txn: Client<typeof TxnService> }> {
  const proc = await spawnCoordinator(c.url, { graceMs, intervalMs: INTERVAL_MS });
  const txn = createClient(TxnService, proc.address, { deadlineMs: 10_000 });
  extra.push({ close: async () => (txn.close(), await proc.stop()) });
  return { proc, txn };
}

test('the coordinator is SIGKILLed before the decision, then restarted: in doubt, then aborted', async () => {
  const c = await startCatalog(nodes, 'restart');
  extra.push(c);
  const txid = newTxid('coord');
  const run = runChild(
    spec(c.clusterUid, txid, { coordinators: [c.coordinator.address], pauseBeforeDecide: true }),
  );
  await run.waitFor('deciding');
  await c.coordinator.kill();
  run.send('go');
  assert.equal(await run.waitFor('outcome:'), 'outcome: in-doubt');
  assert.equal((await preparedFor(nodes, txid)).length, 3, 'left prepared for recovery');
  const restarted = await another(c);
  await restarted.proc.whenActive;
  assert.equal(await settled(restarted.txn, txid, run), 'abort');
});

test('the coordinator is SIGKILLed before the decision, a standby takes over: the retried Decide commits', async () => {
  // Recovery must not abort the transaction while the standby takes over: that is not tested here.
  const c = await startCatalog(nodes, 'standby', LONG_GRACE_MS);
  extra.push(c);
  const standby = await another(c, LONG_GRACE_MS);
  const txid = newTxid('coord');
  const run = runChild(
    spec(c.clusterUid, txid, {
      coordinators: [c.coordinator.address, standby.proc.address],
      pauseBeforeDecide: true,
      retryForMs: 30_000,
    }),
  );
  await run.waitFor('deciding');
  await c.coordinator.kill();
  run.send('go');
  assert.equal(await run.waitFor('outcome:'), 'outcome: committed');
  await standby.proc.whenActive;
  assert.equal(await settled(standby.txn, txid, run), 'commit');
});

test('the coordinator is SIGKILLed right after logging the decision: the commit completes without it', async () => {
  // The commit is decided before the kill; recovery aborting it first on a slow machine (its
  // prepare to decide taking longer than GRACE_MS) would be a test of something else.
  const c = await startCatalog(nodes, 'afterdecide', LONG_GRACE_MS);
  extra.push(c);
  const standby = await another(c, LONG_GRACE_MS);
  const txid = newTxid('coord');
  const run = runChild(
    spec(c.clusterUid, txid, { coordinators: [c.coordinator.address], pauseAt: 'after-decision' }),
  );
  await run.waitFor('paused: after-decision');
  await c.coordinator.kill();
  run.send('go');
  assert.equal(await run.waitFor('outcome:'), 'outcome: committed');
  await standby.proc.whenActive;
  assert.equal(await settled(standby.txn, txid, run), 'commit');
});

test('the coordinator is SIGKILLed while Decide is in flight: whatever the child was told holds', async (t) => {
  const c = await startCatalog(nodes, 'inflight');
  extra.push(c);
  const standby = await another(c);
  const txid = newTxid('coord');
  const run = runChild(spec(c.clusterUid, txid, { coordinators: [c.coordinator.address] }));
  await run.waitFor('deciding');
  await c.coordinator.kill();
  const outcome = await run.waitFor('outcome:');
  assert.ok(['outcome: committed', 'outcome: in-doubt'].includes(outcome), outcome);
  await standby.proc.whenActive;
  t.diagnostic(`${outcome}; logged: ${await settled(standby.txn, txid, run)}`);
});
