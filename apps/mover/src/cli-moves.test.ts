// The `tessera` commands that run mover jobs, in-process through the CLI's main() against a real
// cluster and a real mover: --plan, confirmation (refused off a terminal, asked on one), --wait
// with JSON lines or a progress bar, jobs list/show/watch/cancel, verify, split --move-to, merge,
// and a failing job's exit code.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { captureIo, main } from '@tessera/cli';
import {
  bulkInsert,
  replicationLeftovers,
  startMoverCluster,
  type MoverCluster,
} from './testing/cluster.js';

let c: MoverCluster;

before(async () => {
  c = await startMoverCluster({ ranges: 2 });
  const r = await c.viaRouter();
  try {
    await bulkInsert(
      r,
      'accounts',
      ['id', 'balance'],
      Array.from({ length: 2000 }, (_, i) => [i + 1, 1]),
    );
  } finally {
    await r.end();
  }
  await c.startMover();
});
after(async () => {
  await c?.dispose();
});

interface Run {
  code: number;
  out: string;
  err: string;
}

async function tessera(argv: string[], terminal?: { answer: string }): Promise<Run> {
  const io = captureIo({}, '/tmp');
  if (terminal) {
    io.isTerminal = true;
    io.ask = async (q) => {
      io.err(q);
      return terminal.answer;
    };
  }
  const code = await main([...argv, '--coordinator', c.coordinator.address], io);
  return { code, out: io.stdout, err: io.stderr };
}

async function ranges() {
  return (await c.catalog.getCatalog({})).ranges.filter((r) => r.keyspace === 'accounts');
}

test('range move --plan prints every step, rows, bytes and an estimate, and changes nothing', async () => {
  const [r] = await ranges();
  const epoch = (await c.catalog.getCatalog({})).epoch;
  const text = await tessera(['range', 'move', `accounts:${r!.lo}`, '--to', 'data2', '--plan']);
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /^move accounts:\[-9223372036854775808, -1\] from data1 to data2$/m);
  assert.match(text.out, /^\d[\d,]* rows, [\d.]+ kB to copy; about [\d.]+ s/m);
  assert.match(text.out, /^ {2}ok {4}wal_level +node data1 runs with wal_level=logical$/m);
  assert.match(text.out, /^ {2}8\. delete: /m);
  const json = await tessera([
    'range',
    'move',
    `accounts:${r!.lo}`,
    '--to',
    'data2',
    '--plan',
    '--json',
  ]);
  const plan = JSON.parse(json.out);
  assert.equal(plan.steps.length, 8);
  assert.ok(plan.rows > 500);
  assert.equal((await c.catalog.getCatalog({})).epoch, epoch);
});

test('a changing command is refused off a terminal without --yes, and asks on one', async () => {
  const [r] = await ranges();
  const refused = await tessera(['range', 'move', `accounts:${r!.lo}`, '--to', 'data2']);
  assert.equal(refused.code, 2);
  assert.match(
    refused.err,
    /Move range accounts:-9223372036854775808 from data1 to data2: pass --yes to confirm/,
  );
  const no = await tessera(['range', 'move', `accounts:${r!.lo}`, '--to', 'data2'], {
    answer: 'n',
  });
  assert.equal(no.code, 1);
  assert.match(no.err, /\[y\/N\] tessera: not confirmed; nothing was changed/);
  assert.deepEqual((await c.jobs.listJobs({})).jobs, []);
});

test('range move --yes --wait: JSON lines while it runs, the job at the end; jobs list and show', async () => {
  const [r] = await ranges();
  const run = await tessera([
    'range',
    'move',
    `accounts:${r!.lo}`,
    '--to',
    'data2',
    '--yes',
    '--wait',
  ]);
  assert.equal(run.code, 0, run.err);
  const lines = run.out.split('\n').filter((l) => l.startsWith('{'));
  assert.ok(lines.length >= 1, run.out);
  const phases = lines.map((l) => JSON.parse(l).phase as string);
  assert.ok(phases.every((p) => typeof p === 'string'));
  assert.match(run.out, /^state: {3}done \(phase deleting\), past its point of no return$/m);
  const id = /^job (\d+) \(move: /m.exec(run.out)![1]!;
  assert.equal((await ranges())[0]!.owner, 'data2');

  const list = await tessera(['jobs', 'list', '--all']);
  assert.match(
    list.out,
    new RegExp(`^${id} +move +done +deleting +accounts:-9223372036854775808 -> data2`, 'm'),
  );
  const show = JSON.parse((await tessera(['jobs', 'show', id, '--json'])).out);
  assert.equal(show.state, 'done');
  assert.deepEqual(
    show.steps.map((s: { name: string; state: string }) => `${s.name}:${s.state}`),
    ['plan', 'prepare', 'copy', 'sync', 'cutover', 'verify', 'teardown', 'delete'].map(
      (n) => `${n}:done`,
    ),
  );
  assert.ok(show.result.cutover.pauseMs > 0);
  const watched = await tessera(['jobs', 'watch', id, '--json']);
  assert.equal(watched.code, 0);
  assert.equal(JSON.parse(watched.out.trim().split('\n').pop()!).state, 'done');
});

test('on a terminal --wait draws a progress bar in place', async () => {
  const [r] = await ranges();
  const run = await tessera(['range', 'move', `accounts:${r!.lo}`, '--to', 'data1', '--wait'], {
    answer: 'y',
  });
  assert.equal(run.code, 0, run.err);
  assert.match(run.out, /\r\[[#-]{24}\] {2}job \d+ move/);
  assert.equal((await ranges())[0]!.owner, 'data1');
});

test('split --move-to, then merge back, then verify; nothing left behind', async () => {
  const [r] = await ranges();
  const split = await tessera([
    'range',
    'split',
    `accounts:${r!.lo}`,
    '--move-to',
    'data2',
    '--yes',
    '--wait',
  ]);
  assert.equal(split.code, 0, split.err);
  let now = await ranges();
  assert.equal(now.length, 3);
  assert.deepEqual(
    now.slice(0, 2).map((x) => x.owner),
    ['data1', 'data2'],
  );
  const merge = await tessera([
    'range',
    'merge',
    `accounts:${now[0]!.lo}`,
    `accounts:${now[1]!.lo}`,
    '--yes',
    '--wait',
  ]);
  assert.equal(merge.code, 0, merge.err);
  now = await ranges();
  assert.equal(now.length, 2);
  assert.equal(now[0]!.owner, 'data1');
  const verify = await tessera(['verify', 'accounts']);
  assert.equal(verify.code, 0, verify.err);
  assert.match(verify.out, /^ok: 2000 rows of accounts checked$/m);
  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);
});

test("--wait exits 1 with the job's error; a queued job is cancelled at once", async () => {
  const [r] = await ranges();
  const bad = await tessera([
    'range',
    'move',
    `accounts:${r!.lo}`,
    '--to',
    'nosuch',
    '--yes',
    '--wait',
  ]);
  assert.equal(bad.code, 1);
  assert.match(
    bad.err,
    /^tessera: job \d+ ended failed: node nosuch is not an active node of the cluster/m,
  );
  const bogus = await tessera(['jobs', 'cancel', 'x', '--yes']);
  assert.equal(bogus.code, 2);
  const job = await c.jobs.submitJob({
    kind: 'verify',
    specJson: '{"keyspace":"accounts"}',
    steps: ['verify'],
  });
  const cancel = await tessera(['jobs', 'cancel', job.id.toString(), '--yes', '--wait']);
  // The mover may already be running it (it is quick): cancelled, or done before the cancel.
  assert.ok(cancel.code === 0 || /already done/.test(cancel.err), cancel.err);
});
