// Bank (issue 5's acceptance check): 1,000 accounts sharded over the nodes, 8 clients moving money
// between random accounts (most transfers cross nodes) in BEGIN; UPDATE; UPDATE; INSERTs; COMMIT,
// while a fault loop terminates the router's backends on a node, restarts the router and
// restarts the coordinator at random moments. Once recovery has left nothing prepared: the total
// is unchanged, every transfer is applied whole or not at all (its rows on both sides, the
// balances agree with them, its ledger copies on every node), every commit a client saw is
// applied, and nothing a client saw fail before COMMIT is. TESSERA_BANK_SECONDS (default 15; the
// acceptance run is 60) sets how long the clients run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

const SECONDS = Number(process.env['TESSERA_BANK_SECONDS'] ?? 15);
const ACCOUNTS = 1000;
const START_BALANCE = 1000;
const CLIENTS = 8;
let c: TestCluster;

type State = 'committed' | 'failed' | 'unknown';
interface Transfer {
  readonly id: string;
  state: State;
}

before(async () => {
  c = await startTestCluster({
    tables: [
      { name: 'accounts', kind: 'sharded', keyspace: 'tenants', keyColumn: 'id' },
      { name: 'transfers', kind: 'sharded', keyspace: 'tenants', keyColumn: 'account_id' },
      { name: 'ledger', kind: 'reference' },
    ],
    router: { poolSize: 30 },
  });
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query('create table accounts (id bigint primary key, balance bigint not null)');
  // Each side of a transfer, on the node of its account (colocated by account_id).
  await client.query(
    'create table transfers (account_id bigint not null, transfer_id text not null, amount bigint not null, primary key (account_id, transfer_id))',
  );
  await client.query('create table ledger (transfer_id text primary key)');
  const rows = Array.from({ length: ACCOUNTS }, (_, i) => `(${i + 1}, ${START_BALANCE})`);
  await client.query(`insert into accounts (id, balance) values ${rows.join(', ')}`);
  await client.end();
});
after(async () => {
  await c?.dispose();
});

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: c.url(),
    // A transfer may wait on rows a crashed commit left prepared until recovery settles them.
    statement_timeout: 30_000,
    query_timeout: 40_000,
    connectionTimeoutMillis: 5_000,
  });
  client.on('error', () => undefined); // a killed connection: the next query fails and we reconnect
  await client.connect();
  return client;
}

const random = (n: number): number => Math.floor(Math.random() * n);

async function runClient(w: number, until: number, log: Transfer[]): Promise<void> {
  let client: pg.Client | undefined;
  for (let n = 0; Date.now() < until; n++) {
    if (client === undefined) {
      client = await connect().catch(() => undefined);
      if (client === undefined) {
        await sleep(100);
        continue;
      }
    }
    const from = random(ACCOUNTS) + 1;
    let to = random(ACCOUNTS) + 1;
    if (to === from) to = (to % ACCOUNTS) + 1;
    const amount = random(100) + 1;
    const t: Transfer = { id: `w${w}-${n}`, state: 'failed' };
    log.push(t);
    let committing = false;
    try {
      await client.query('begin');
      // Accounts locked in id order: two transfers never wait on each other across nodes.
      const moves: [number, number][] = [
        [from, -amount],
        [to, amount],
      ];
      moves.sort((x, y) => x[0] - y[0]);
      for (const [id, delta] of moves)
        await client.query(`update accounts set balance = balance + ${delta} where id = ${id}`);
      for (const [id, delta] of moves)
        await client.query(
          `insert into transfers (account_id, transfer_id, amount) values (${id}, '${t.id}', ${delta})`,
        );
      if (n % 2 === 0) await client.query(`insert into ledger (transfer_id) values ('${t.id}')`);
      committing = true;
      const res = await client.query('commit');
      t.state = res.command === 'COMMIT' ? 'committed' : 'failed';
    } catch (e) {
      // Before COMMIT nothing can have committed; at COMMIT only 40001 (aborted by the log) is
      // certain: in doubt (08007), a lost connection or a node's error may hide either outcome.
      t.state = !committing || (e as { code?: string }).code === '40001' ? 'failed' : 'unknown';
      await client.end().catch(() => undefined);
      client = undefined;
    }
  }
  await client?.end().catch(() => undefined);
}

/** Kills something every 1-3 s until `until`; returns what it did. */
async function faults(until: number): Promise<string[]> {
  const done: string[] = [];
  while (Date.now() < until - 1000) {
    await sleep(1000 + random(2000));
    const pick = random(3);
    try {
      if (pick === 0) {
        const node = c.data[random(c.data.length)]!;
        await node.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and backend_type = 'client backend' and datname = 'postgres' and random() < 0.5`,
        );
        done.push('terminate');
      } else if (pick === 1) {
        await c.restartRouter({ poolSize: 30 });
        done.push('router');
      } else {
        await c.restartCoordinator({ downMs: random(500) });
        done.push('coordinator');
      }
    } catch (e) {
      done.push(`fault failed: ${(e as Error).message}`);
    }
  }
  return done;
}

async function preparedLeft(): Promise<number> {
  let n = 0;
  for (const server of c.byName.values())
    n += Number(
      (await server.query<{ n: string }>('select count(*) n from pg_prepared_xacts'))[0]!.n,
    );
  return n;
}

describe('bank', () => {
  test(
    `${CLIENTS} clients transferring for ${SECONDS} s under faults lose and invent nothing`,
    { timeout: (SECONDS + 180) * 1000 },
    async (t) => {
      const until = Date.now() + SECONDS * 1000;
      const log: Transfer[] = [];
      const [fired] = await Promise.all([
        faults(until),
        ...Array.from({ length: CLIENTS }, (_, w) => runClient(w, until, log)),
      ]);
      // Recovery settles whatever a crash left prepared (no decision: aborted after its grace).
      const deadline = Date.now() + 90_000;
      while ((await preparedLeft()) > 0 && Date.now() < deadline) await sleep(500);
      assert.equal(await preparedLeft(), 0, 'recovery left prepared transactions');

      const balances = new Map<number, bigint>();
      const sides = new Map<string, { rows: number; sum: bigint }>();
      const byAccount = new Map<number, bigint>();
      const ledgers: Set<string>[] = [];
      for (const server of c.byName.values()) {
        for (const r of await server.query<{ id: string; balance: string }>(
          'select id, balance from accounts',
        ))
          balances.set(Number(r.id), BigInt(r.balance));
        for (const r of await server.query<{
          account_id: string;
          transfer_id: string;
          amount: string;
        }>('select account_id, transfer_id, amount from transfers')) {
          const s = sides.get(r.transfer_id) ?? { rows: 0, sum: 0n };
          s.rows++;
          s.sum += BigInt(r.amount);
          sides.set(r.transfer_id, s);
          const a = Number(r.account_id);
          byAccount.set(a, (byAccount.get(a) ?? 0n) + BigInt(r.amount));
        }
        ledgers.push(
          new Set(
            (await server.query<{ transfer_id: string }>('select transfer_id from ledger')).map(
              (r) => r.transfer_id,
            ),
          ),
        );
      }
      assert.equal(balances.size, ACCOUNTS, 'every account exactly once');
      let total = 0n;
      for (const b of balances.values()) total += b;
      assert.equal(total, BigInt(ACCOUNTS * START_BALANCE), 'the total money is unchanged');
      for (const [id, s] of sides) {
        assert.equal(s.rows, 2, `transfer ${id} applied on one side only`);
        assert.equal(s.sum, 0n, `transfer ${id} does not balance`);
      }
      for (const [id, b] of balances)
        assert.equal(
          b,
          BigInt(START_BALANCE) + (byAccount.get(id) ?? 0n),
          `account ${id}'s balance disagrees with its transfers`,
        );
      // The reference copies agree, and a ledger row exists only for an applied transfer.
      for (const l of ledgers.slice(1)) assert.deepEqual([...l].sort(), [...ledgers[0]!].sort());
      for (const id of ledgers[0]!) assert.ok(sides.has(id), `ledger row of unapplied ${id}`);
      const count = { committed: 0, failed: 0, unknown: 0, unknownApplied: 0 };
      for (const tr of log) {
        count[tr.state]++;
        if (tr.state === 'committed') assert.ok(sides.has(tr.id), `seen committed, lost: ${tr.id}`);
        if (tr.state === 'failed') assert.ok(!sides.has(tr.id), `seen failed, applied: ${tr.id}`);
        if (tr.state === 'unknown' && sides.has(tr.id)) count.unknownApplied++;
      }
      assert.ok(count.committed > 0, 'some transfers committed');
      t.diagnostic(
        `transfers: ${count.committed} committed, ${count.failed} failed, ${count.unknown} unknown (${count.unknownApplied} of them applied); faults: ${fired.join(' ')}`,
      );
    },
  );
});
