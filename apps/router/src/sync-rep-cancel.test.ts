// A client's cancel of a commit waiting for the synchronous replica never returns success
// (research/failover.md 3.2 #5). Data node data1 gets a real synchronous streaming replica; the
// replica is frozen with SIGSTOP, so every commit on data1 waits in SyncRep; the client cancels.
// Plain Postgres answers the cancelled wait with WARNING + success (checked here, so the test
// shows what the router must not pass on); through the router the client gets 08007 instead,
// for an autocommit INSERT (extended and simple protocol) and for a transaction's COMMIT. After
// SIGCONT every one of those rows is on the primary and on the replica.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import {
  pauseServer,
  resumeServer,
  setSynchronousStandbys,
  startReplica,
  waitForStreaming,
  type PgServer,
  type StandbyServer,
} from '@tessera/testkit';
import { sendCancel } from './testing/cancel.js';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { keysByNode } from './testing/keys.js';

let c: TestCluster;
let data1: PgServer;
let replica: StandbyServer;
let paused = false;
let keys: number[] = [];

before(async () => {
  c = await startTestCluster();
  data1 = c.byName.get('data1')!;
  replica = await startReplica(data1, { name: 'data1-sync' });
  await data1.query('alter system set synchronous_commit = on');
  await setSynchronousStandbys(data1, [replica.applicationName]);
  await waitForStreaming(data1, [replica], true);
  await data1.query('create table plain_t (id int)');
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query('create table orders (tenant_id bigint not null, id int not null)');
  await client.end();
  keys = keysByNode(c.router, 'orders').get('data1')!;
});
after(async () => {
  if (paused) resumeServer(replica);
  await c?.dispose();
  await replica?.dispose();
});

/** Until a backend of data1 waits for the synchronous replica (the commit is in its wait). */
async function untilSyncRepWait(): Promise<void> {
  const deadline = performance.now() + 20_000;
  for (;;) {
    const rows = await data1.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where wait_event = 'SyncRep'`,
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    if (performance.now() > deadline) throw new Error('no backend waits in SyncRep');
    await sleep(50);
  }
}

interface Outcome {
  ok: boolean;
  code: string;
  message: string;
  notices: string[];
}

/** Runs `statements` on a fresh client of `url`; the last one is cancelled during its SyncRep wait. */
async function cancelledCommit(
  url: string,
  port: number,
  statements: { text: string; values?: unknown[] }[],
): Promise<Outcome> {
  const client = new pg.Client({ connectionString: url });
  const notices: string[] = [];
  client.on('notice', (n) => notices.push(n.message ?? ''));
  client.on('error', () => undefined);
  await client.connect();
  try {
    for (const s of statements.slice(0, -1)) await client.query(s.text, s.values);
    const last = statements.at(-1)!;
    const running = client.query(last.text, last.values).then(
      () => ({ ok: true, code: '', message: '' }),
      (e: { code?: string; message: string }) => ({
        ok: false,
        code: e.code ?? '',
        message: e.message,
      }),
    );
    await untilSyncRepWait();
    const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
    await sendCancel(port, processID, secretKey);
    const r = await Promise.race([
      running,
      sleep(20_000).then(() => ({ ok: false, code: 'timeout', message: 'no answer in 20 s' })),
    ]);
    return { ...r, notices };
  } finally {
    await client.end().catch(() => undefined);
  }
}

const ids: number[] = [];

test('a cancelled sync-rep wait: plain Postgres says success, the router says 08007', async () => {
  pauseServer(replica);
  paused = true;

  // Plain Postgres, straight to data1's primary: success with a WARNING (what must not pass).
  const plain = await cancelledCommit(data1.url(), data1.port, [
    { text: 'insert into plain_t (id) values (1)' },
  ]);
  assert.equal(plain.ok, true, `plain Postgres: ${JSON.stringify(plain)}`);
  assert.ok(
    plain.notices.some((n) => n.startsWith('canceling wait for synchronous replication')),
    `plain Postgres warned: ${JSON.stringify(plain.notices)}`,
  );

  const cases: {
    name: string;
    statements: (id: number) => { text: string; values?: unknown[] }[];
  }[] = [
    {
      name: 'autocommit INSERT, extended protocol',
      statements: (id) => [
        { text: 'insert into orders (tenant_id, id) values ($1, $2)', values: [keys[0], id] },
      ],
    },
    {
      name: 'autocommit INSERT, simple protocol',
      statements: (id) => [
        { text: `insert into orders (tenant_id, id) values (${keys[0]}, ${id})` },
      ],
    },
    {
      name: 'COMMIT of a transaction',
      statements: (id) => [
        { text: 'begin' },
        { text: 'insert into orders (tenant_id, id) values ($1, $2)', values: [keys[0], id] },
        { text: 'commit' },
      ],
    },
  ];
  for (const [i, k] of cases.entries()) {
    const id = 100 + i;
    ids.push(id);
    const r = await cancelledCommit(c.url(), c.router.port, k.statements(id));
    assert.equal(r.ok, false, `${k.name}: the client got success for an unreplicated commit`);
    assert.equal(r.code, '08007', `${k.name}: ${JSON.stringify(r)}`);
    assert.match(r.message, /synchronous replica/);
  }
});

test('after SIGCONT the rows are on the primary and on the replica, and writes flow', async () => {
  resumeServer(replica);
  paused = false;
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  try {
    await client.query('insert into orders (tenant_id, id) values ($1, 999)', [keys[0]]);
    const { rows } = await client.query<{ id: number }>(
      'select id from orders where tenant_id = $1 order by id',
      [keys[0]],
    );
    assert.deepEqual(
      rows.map((r) => r.id),
      [...ids, 999],
    );
  } finally {
    await client.end();
  }
  // The insert of 999 waited for the replica, which replays in order: it has them all.
  const deadline = performance.now() + 20_000;
  let have: number[] = [];
  while (performance.now() < deadline) {
    have = (
      await replica.query<{ id: number }>(
        'select id from orders where tenant_id = $1 order by id',
        [keys[0]],
      )
    ).map((r) => r.id);
    if (have.length === ids.length + 1) break;
    await sleep(100);
  }
  assert.deepEqual(have, [...ids, 999]);
});
