// The kill matrix through the real router (issue 5's first acceptance check): a client runs
// BEGIN; one INSERT on each of three nodes; COMMIT through a `tessera-router` child process that
// SIGKILLs itself at one 2PC fault point (TESSERA_FAULT_2PC), or whose coordinator process is
// SIGKILLed while the router is held just before Decide. Once the coordinator's recovery has
// settled it: the rows are on every node iff a commit was logged (on none otherwise), nothing is
// left in pg_prepared_xacts, and what the client was told never contradicts the outcome.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { AdminService, KeyType, NodeRole, createClient } from '@tessera/proto';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import type { FaultPoint } from '@tessera/twopc';
import {
  startCoordinatorProcess,
  startRouterProcess,
  type CoordinatorProcess,
  type RouterProcess,
} from './testing/processes.js';

/** The three nodes the transaction writes on; ranges go to data nodes only, so home has none. */
const NODES = ['data1', 'data2', 'data3'] as const;
type NodeName = (typeof NODES)[number];
/** Short, so an undecided prepared transaction is aborted a moment after its router died. */
const GRACE_MS = 1500;
const INTERVAL_MS = 200;
/** application_name of the test's client; the router replays it on the backends it uses. */
const APP = 'router-kill-matrix';

let home: PgServer;
/** The data nodes, in NODES order. */
let servers: PgServer[] = [];
let byName: Map<NodeName, PgServer>;
let catalogUrl: string;
let coordinator: CoordinatorProcess;
/** A tenant_id owned by each node, found through the router at setup. */
const keyOf = new Map<NodeName, number>();
const routers: RouterProcess[] = [];

before(async () => {
  const all = await startPostgresCluster(4, { name: 'router-kill' });
  home = all[0] as PgServer;
  servers = all.slice(1);
  byName = new Map(NODES.map((n, i) => [n, servers[i] as PgServer]));
  await home.query('create database tessera_catalog');
  catalogUrl = home.url('tessera_catalog');
  coordinator = await startCoordinatorProcess(catalogUrl, {
    recoveryGraceMs: GRACE_MS,
    recoveryIntervalMs: INTERVAL_MS,
  });
  const admin = createClient(AdminService, coordinator.address, { deadlineMs: 10_000 });
  await admin.addNode({ name: 'home', host: '127.0.0.1', port: home.port, role: NodeRole.HOME });
  for (const [i, s] of servers.entries())
    await admin.addNode({ name: NODES[i], host: '127.0.0.1', port: s.port, role: NodeRole.DATA });
  // Three ranges, owned round-robin by the data nodes: one each.
  await admin.createKeyspace({ name: 'tenants', keyType: KeyType.BIGINT, ranges: 3, seed: 0n });
  await admin.distributeTable({
    schema: 'public',
    name: 'kill_rows',
    keyColumn: 'tenant_id',
    keyspace: 'tenants',
  });
  admin.close();

  // A router without a fault: creates the table everywhere and shows which key lands where (its
  // multi-row INSERT is itself a 2PC commit that must simply work).
  const r = await startRouter('kill-setup');
  const client = await connect(r.port);
  await client.query('create table kill_rows (tenant_id bigint not null, marker text not null)');
  const probes = Array.from({ length: 30 }, (_, i) => `(${i + 1}, 'probe')`).join(', ');
  await client.query(`insert into kill_rows (tenant_id, marker) values ${probes}`);
  await client.end();
  for (const n of NODES) {
    const rows = await node(n).query<{ k: string | null }>(
      `select min(tenant_id)::text as k from kill_rows where marker = 'probe'`,
    );
    assert.ok(rows[0]?.k, `no probe key landed on ${n}`);
    keyOf.set(n, Number(rows[0].k));
  }
  await r.stop();
});

after(async () => {
  for (const r of routers) await r.kill().catch(() => undefined);
  await coordinator?.kill().catch(() => undefined);
  for (const s of [...servers, home]) {
    if (s === undefined) continue;
    const left = await s
      .query<{ gid: string }>('select gid from pg_prepared_xacts')
      .catch(() => []);
    for (const { gid } of left) await s.query(`rollback prepared '${gid}'`).catch(() => undefined);
    await s.dispose();
  }
});

// A case that failed part-way may leave its router running (or stopped): its backends would
// hold the next case's wait for the sessions to end.
afterEach(async () => {
  for (const r of routers.splice(0)) await r.kill().catch(() => undefined);
});

const node = (n: NodeName): PgServer => byName.get(n) as PgServer;

async function startRouter(routerId: string, env?: Record<string, string>): Promise<RouterProcess> {
  const r = await startRouterProcess({ coordinator: coordinator.address, routerId, env });
  routers.push(r);
  return r;
}

async function connect(port: number): Promise<pg.Client> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    application_name: APP,
  });
  client.on('error', () => undefined); // a killed router: the pending query rejects instead
  await client.connect();
  return client;
}

/** What the client was told at COMMIT. */
type Told = 'committed' | 'in-doubt' | 'lost' | `error ${string}`;

/** BEGIN; one row marked `marker` on each node; COMMIT. Only COMMIT may fail. */
async function commitOnEveryNode(port: number, marker: string): Promise<Told> {
  const client = await connect(port);
  try {
    await client.query('begin');
    for (const n of NODES)
      await client.query(
        `insert into kill_rows (tenant_id, marker) values (${keyOf.get(n)}, '${marker}')`,
      );
    try {
      const res = await client.query('commit');
      return res.command === 'COMMIT' ? 'committed' : `error ${res.command}`;
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      // A SQLSTATE came from the router; anything else (ECONNRESET, "Connection terminated
      // unexpectedly") is the connection lost: the client cannot know the outcome.
      if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return 'lost';
      return code === '08007' ? 'in-doubt' : `error ${code}`;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function until(
  what: string,
  cond: () => Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

async function sum(sql: string, params: unknown[] = []): Promise<number> {
  const all = await Promise.all(servers.map((s) => s.query<{ n: string }>(sql, params)));
  return all.reduce((total, rows) => total + Number(rows[0]?.n ?? 0), 0);
}

/** Sessions on the nodes that serve the test's client (the router replays its application_name). */
const routerSessions = (): Promise<number> =>
  sum(`select count(*)::text as n from pg_stat_activity where application_name = $1`, [APP]);

/** How many gids of `routerId`'s transactions are still prepared (its txids start with its id). */
const preparedOf = (routerId: string): Promise<number> =>
  sum(`select count(*)::text as n from pg_prepared_xacts where gid like $1`, [`%:${routerId}-%`]);

/** The decision logged for the one 2PC transaction of `routerId`, or 'none'. */
async function loggedDecision(routerId: string): Promise<'commit' | 'abort' | 'none'> {
  const rows = await home.query<{ decision: 'commit' | 'abort' }>(
    'select decision from tessera.txn_decision where txid like $1',
    [`${routerId}-%`],
    'tessera_catalog',
  );
  assert.ok(rows.length <= 1, `one 2PC transaction per router, found ${rows.length}`);
  return rows[0]?.decision ?? 'none';
}

/**
 * Waits until the router's backends are gone (a PREPARE it sent just before dying still runs to
 * its end) and recovery has left nothing prepared, then checks the outcome against the log and
 * the client. Returns the logged decision.
 */
async function settled(routerId: string, told: Told): Promise<'commit' | 'abort' | 'none'> {
  await until('the router sessions are gone', async () => (await routerSessions()) === 0);
  await until('recovery left nothing prepared', async () => (await preparedOf(routerId)) === 0);
  assert.equal(await sum('select count(*)::text as n from pg_prepared_xacts'), 0);
  const decision = await loggedDecision(routerId);
  const applied = await Promise.all(
    NODES.map(async (n) =>
      Number(
        (
          await node(n).query<{ n: string }>(
            'select count(*)::text as n from kill_rows where marker = $1',
            [routerId],
          )
        )[0]?.n,
      ),
    ),
  );
  const expected = decision === 'commit' ? [1, 1, 1] : [0, 0, 0];
  assert.deepEqual(applied, expected, `rows per node, logged ${decision}, client told ${told}`);
  if (told === 'committed') assert.equal(decision, 'commit', 'the client was told COMMIT');
  if (told.startsWith('error '))
    assert.notEqual(decision, 'commit', `the client was told a definite ${told}`);
  return decision;
}

// The decision each kill leaves logged. A dead router logs nothing more, so 'abort' after an
// after-prepare kill is recovery's: it found a gid left prepared and, with no decision past the
// grace period, logged abort before rolling back.
const KILL_POINTS: [FaultPoint, 'commit' | 'abort' | 'none'][] = [
  ['before-prepare', 'none'],
  ['after-prepare:data1', 'abort'],
  ['after-prepare:data2', 'abort'],
  ['after-prepare:data3', 'abort'],
  ['after-decision', 'commit'],
  ['after-commit:data1', 'commit'],
  ['after-commit:data2', 'commit'],
  ['after-commit:data3', 'commit'],
  ['after-all', 'commit'],
];

for (const [i, [point, expected]] of KILL_POINTS.entries()) {
  test(`the router is SIGKILLed at ${point}: ${expected} logged, applied accordingly`, async (t) => {
    const routerId = `kill-matrix-${i}`;
    const router = await startRouter(routerId, { TESSERA_FAULT_2PC: point });
    assert.ok(
      router.log.some((e) => e.msg?.startsWith('TESSERA_FAULT_2PC is set')),
      'the router warns at startup that the knob is set',
    );
    const told = await commitOnEveryNode(router.port, routerId);
    assert.equal(await router.exited, 'SIGKILL');
    await router.waitForLog('TESSERA_FAULT_2PC: SIGKILLing');
    assert.ok(
      router.log.some((e) => e['point'] === point && e.msg?.startsWith('TESSERA_FAULT_2PC: SIG')),
      `it died at ${point}`,
    );
    // Killed inside COMMIT, before answering it: the client cannot know.
    assert.equal(told, 'lost');
    assert.equal(await settled(routerId, told), expected);
    t.diagnostic(`client: ${told}; logged: ${expected}`);
  });
}

/** Starts the coordinator again on the address the router knows, after it was killed. */
async function startCoordinatorAgain(listen: string, recoveryGraceMs: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      coordinator = await startCoordinatorProcess(catalogUrl, {
        listen,
        recoveryGraceMs,
        recoveryIntervalMs: INTERVAL_MS,
      });
      return;
    } catch (e) {
      if (attempt >= 10) throw e; // the port was just released; give it a moment
      await sleep(100);
    }
  }
}

/**
 * Starts a router that SIGSTOPs itself right after the last PREPARE, before Decide, and a
 * client's commit through it; resolves once the router is frozen there (all three prepared).
 */
async function commitHeldBeforeDecide(
  routerId: string,
): Promise<{ router: RouterProcess; told: Promise<Told> }> {
  const router = await startRouter(routerId, {
    TESSERA_FAULT_2PC: 'after-prepare:data3',
    TESSERA_FAULT_2PC_ACTION: 'stop',
  });
  const told = commitOnEveryNode(router.port, routerId);
  void told.catch(() => undefined); // awaited by the test; this only keeps an early failure handled
  await router.waitForLog('TESSERA_FAULT_2PC: SIGSTOPping');
  await until('all three are prepared', async () => (await preparedOf(routerId)) === 3);
  // What settled() waits out later is really there (else that wait would prove nothing).
  assert.equal(await routerSessions(), 3, "the router's backends carry the client's name");
  return { router, told };
}

test('the coordinator is SIGKILLed before the decision and stays down: 08007, then recovery aborts', async (t) => {
  const routerId = 'kill-matrix-coord-down';
  const { router, told } = await commitHeldBeforeDecide(routerId);
  const listen = coordinator.address;
  await coordinator.kill();
  router.child.kill('SIGCONT');
  // The router retries Decide for 5 s, then gives up: in doubt, nothing rolled back.
  assert.equal(await told, 'in-doubt');
  assert.equal(await preparedOf(routerId), 3, 'all three left prepared for recovery');
  await startCoordinatorAgain(listen, GRACE_MS);
  await router.stop();
  assert.equal(await settled(routerId, await told), 'abort');
  t.diagnostic('client: in-doubt; logged: abort (by recovery, after the grace period)');
});

test('the coordinator is SIGKILLed before the decision and restarted; its recovery aborts first: 40001', async (t) => {
  const routerId = 'kill-matrix-coord-abort';
  const { router, told } = await commitHeldBeforeDecide(routerId);
  const listen = coordinator.address;
  await coordinator.kill();
  await startCoordinatorAgain(listen, GRACE_MS);
  // Past the grace period with no decision logged, recovery logs abort and rolls back.
  await until('recovery aborted it', async () => (await preparedOf(routerId)) === 0);
  assert.equal(await loggedDecision(routerId), 'abort');
  router.child.kill('SIGCONT');
  assert.equal(await told, 'error 40001', 'Decide answered the abort logged first');
  await router.stop();
  assert.equal(await settled(routerId, await told), 'abort');
  t.diagnostic('client: error 40001; logged: abort (by recovery, before the router decided)');
});

// Last: the coordinator it leaves behind has a long grace period.
test('the coordinator is SIGKILLed before the decision and restarted; the retried Decide commits', async (t) => {
  const routerId = 'kill-matrix-coord-back';
  const { router, told } = await commitHeldBeforeDecide(routerId);
  const listen = coordinator.address;
  await coordinator.kill();
  // A grace period far longer than this test: recovery must not abort before the router decides.
  await startCoordinatorAgain(listen, 60_000);
  router.child.kill('SIGCONT');
  assert.equal(await told, 'committed');
  await router.stop();
  assert.equal(await settled(routerId, await told), 'commit');
  t.diagnostic('client: committed; logged: commit (Decide reached the restarted coordinator)');
});
