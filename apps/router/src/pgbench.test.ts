// pgbench through the router: the pgbench tables declared sharded by bid in one keyspace. A plain
// `pgbench -i` stops at its primary keys (aid, tid leave out bid: refused, each node could check
// only its own rows); `-I dtgv` loads the data (one transaction over every node: TRUNCATE and COPY
// FREEZE on each, committed with two-phase commit) and the keys are made with bid in them. Then
// `pgbench -M prepared -c 16 -T 20` with a TPC-B-like script that keeps each transaction inside
// one branch, and pgbench's built-in TPC-B in its three query modes (its statements by aid and
// tid run on every node, two-phase commit): no failed transaction, and the balances add up.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KeyType } from '@tessera/proto';
import { hashKeyText } from '@tessera/pg-hash';
import pg from 'pg';
import { startTestCluster, type TestCluster } from './testing/cluster.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const SCALE = 2;
/** pgbench -i's own layout: 100,000 accounts and 10 tellers per branch. */
const ACCOUNTS_PER_BRANCH = 100_000;
const SECONDS = Number(process.env['TESSERA_PGBENCH_SECONDS'] ?? 20);
let c: TestCluster;

const SCRIPT = `\\set bid random(1, ${SCALE})
\\set aid (:bid - 1) * ${ACCOUNTS_PER_BRANCH} + random(1, ${ACCOUNTS_PER_BRANCH})
\\set tid (:bid - 1) * 10 + random(1, 10)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND bid = :bid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid AND bid = :bid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`;

before(async () => {
  c = await startTestCluster({
    keyspaces: [{ name: 'bench', keyType: KeyType.INT, ranges: 4 }],
    tables: ['pgbench_accounts', 'pgbench_tellers', 'pgbench_history', 'pgbench_branches'].map(
      (name) => ({ name, kind: 'sharded' as const, keyspace: 'bench', keyColumn: 'bid' }),
    ),
    router: { poolSize: 20 },
  });
});
after(async () => {
  await c?.dispose();
});

async function pgbench(args: string[]): Promise<string> {
  const { stdout, stderr } = await run(
    `${BIN}/pgbench`,
    ['-h', '127.0.0.1', '-p', String(c.router.port), '-U', 'postgres', ...args, 'postgres'],
    {
      env: { ...process.env, PGCONNECT_TIMEOUT: '10' },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return stdout + stderr;
}

/** The keys pgbench -i would make, with bid in them, and an index for the TPC-B's reads by aid. */
async function withKeys(): Promise<void> {
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  try {
    for (const sql of [
      'alter table pgbench_branches add primary key (bid)',
      'alter table pgbench_tellers add primary key (bid, tid)',
      'alter table pgbench_accounts add primary key (bid, aid)',
      'create index on pgbench_accounts (aid)',
      'create index on pgbench_tellers (tid)',
    ])
      await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('pgbench', () => {
  test(
    'pgbench -i (one transaction across nodes), a TPC-B-like run inside one branch per transaction',
    { timeout: 180_000 },
    async (t) => {
      await assert.rejects(pgbench(['-i', '-s', String(SCALE)]), (e: Error & { stderr?: string }) =>
        /add primary key[\s\S]*must include its key column "bid"|must include its key column "bid"[\s\S]*add primary key/.test(
          e.stderr ?? '',
        ),
      );
      const init = await pgbench(['-i', '-I', 'dtgv', '-s', String(SCALE)]);
      assert.match(init, /done in/, init);
      await withKeys();
      const counts = await Promise.all(
        [...c.byName.values()].map((server) =>
          server.query<{ a: string; t: string; b: string }>(
            'select (select count(*) from pgbench_accounts) a, (select count(*) from pgbench_tellers) t, (select count(*) from pgbench_branches) b',
          ),
        ),
      );
      const sum = (k: 'a' | 't' | 'b'): number =>
        counts.reduce((n, rows) => n + Number(rows[0]![k]), 0);
      assert.deepEqual(
        [sum('a'), sum('t'), sum('b')],
        [SCALE * ACCOUNTS_PER_BRANCH, SCALE * 10, SCALE],
      );
      for (const server of c.byName.values())
        assert.equal(
          (await server.query<{ n: string }>('select count(*) n from pg_prepared_xacts'))[0]!.n,
          '0',
        );

      const dir = mkdtempSync(join(tmpdir(), 'tessera-pgbench-'));
      const script = join(dir, 'tpcb-branch.sql');
      writeFileSync(script, SCRIPT);
      const out = await pgbench([
        '-n',
        '-M',
        'prepared',
        '-c',
        '16',
        '-j',
        '4',
        '-T',
        String(SECONDS),
        '-f',
        script,
      ]);
      const processed = /number of transactions actually processed: (\d+)/.exec(out);
      const failed = /number of failed transactions: (\d+)/.exec(out);
      assert.ok(processed && Number(processed[1]) > 0, out);
      assert.equal(failed?.[1] ?? '0', '0', out);
      t.diagnostic(
        `pgbench: ${processed[1]} transactions in ${SECONDS} s; ${/tps = [\d.]+/.exec(out)?.[0] ?? ''}`,
      );

      let accounts = 0n;
      let tellers = 0n;
      let branches = 0n;
      let history = 0n;
      for (const server of c.byName.values()) {
        const [row] = await server.query<{ a: string; t: string; b: string; h: string }>(
          `select (select coalesce(sum(abalance), 0) from pgbench_accounts) a, (select coalesce(sum(tbalance), 0) from pgbench_tellers) t,
                (select coalesce(sum(bbalance), 0) from pgbench_branches) b, (select coalesce(sum(delta), 0) from pgbench_history) h`,
        );
        accounts += BigInt(row!.a);
        tellers += BigInt(row!.t);
        branches += BigInt(row!.b);
        history += BigInt(row!.h);
      }
      assert.equal(accounts, history);
      assert.equal(tellers, history);
      assert.equal(branches, history);

      for (const mode of ['simple', 'extended', 'prepared']) {
        const builtin = await pgbench(['-n', '-M', mode, '-c', '4', '-j', '2', '-t', '20']);
        assert.match(builtin, /number of failed transactions: 0/, builtin);
        assert.match(builtin, /number of transactions actually processed: 80\/80/, builtin);
      }
      const viaRouter = new pg.Client({ connectionString: c.url() });
      await viaRouter.connect();
      try {
        const sum = async (sql: string): Promise<string> =>
          String((await viaRouter.query(sql)).rows[0].s);
        const h = await sum('select sum(delta) s from pgbench_history');
        const a = await sum('select sum(abalance) s from pgbench_accounts');
        const tb = await sum('select sum(tbalance) s from pgbench_tellers');
        const b = await sum('select sum(bbalance) s from pgbench_branches');
        assert.deepEqual([a, tb, b], [h, h, h]);
      } finally {
        await viaRouter.end();
      }
    },
  );

  test(
    'pgbench -i -I dtGv: server-side generation is INSERT ... SELECT through the router, each row on its owner',
    { timeout: 180_000 },
    async () => {
      const init = await pgbench(['-i', '-I', 'dtGv', '-s', String(SCALE)]);
      assert.match(init, /server-side generate/, init);
      assert.match(init, /done in/, init);
      const view = c.router.catalog()!.table('public', 'pgbench_accounts');
      if (view?.kind !== 'sharded') throw new Error('pgbench_accounts is not sharded');
      const ks = view.keyspace;
      let accounts = 0;
      let branches = 0;
      for (const [node, server] of c.byName) {
        const rows = await server.query<{ bid: number; n: string }>(
          'select bid, count(*) n from pgbench_accounts group by bid',
        );
        for (const r of rows) {
          assert.equal(ks.ownerOf(hashKeyText(ks.keyType, String(r.bid), ks.seed)), node);
          accounts += Number(r.n);
        }
        branches += Number(
          (await server.query<{ n: string }>('select count(*) n from pgbench_branches'))[0]!.n,
        );
        assert.equal(
          (await server.query<{ n: string }>('select count(*) n from pg_prepared_xacts'))[0]!.n,
          '0',
        );
      }
      assert.deepEqual([accounts, branches], [SCALE * ACCOUNTS_PER_BRANCH, SCALE]);
    },
  );
});
