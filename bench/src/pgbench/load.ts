// Loads pgbench's tables onto one node with only the branches given: pgbench creates the tables
// and their keys (so the schema is exactly pgbench's), the rows are generated server-side here so
// a node of a scale-out run holds exactly the branches it owns.
import { join } from 'node:path';
import pg from 'pg';
import { findPgBinDir } from '@tessera/pgctl';
import { runProcess } from '../harness/processes.js';
import { ACCOUNTS_PER_BRANCH, TELLERS_PER_BRANCH } from './scripts.js';

export interface NodeAddress {
  host: string;
  port: number;
}

async function pgbenchInit(node: NodeAddress, steps: string): Promise<void> {
  const r = await runProcess(
    join(findPgBinDir(), 'pgbench'),
    ['-i', '-I', steps, '-h', node.host, '-p', String(node.port), '-U', 'postgres', 'postgres'],
    { timeoutMs: 600_000 },
  );
  if (r.code !== 0) throw new Error(`pgbench -i -I ${steps} failed: ${r.stderr.trim()}`);
}

async function connectTo(node: NodeAddress): Promise<pg.Client> {
  const client = new pg.Client({
    host: node.host,
    port: node.port,
    user: 'postgres',
    database: 'postgres',
  });
  await client.connect();
  return client;
}

/** Drops and recreates the pgbench tables on `node`, holding branches `bids` only. */
export async function loadBranches(node: NodeAddress, bids: readonly number[]): Promise<void> {
  await pgbenchInit(node, 'dt');
  const client = await connectTo(node);
  try {
    const b = [bids.map(Number)];
    await client.query(
      'insert into pgbench_branches (bid, bbalance) select b, 0 from unnest($1::int[]) b',
      b,
    );
    await client.query(
      `insert into pgbench_tellers (tid, bid, tbalance)
       select (b - 1) * ${TELLERS_PER_BRANCH} + t, b, 0
       from unnest($1::int[]) b, generate_series(1, ${TELLERS_PER_BRANCH}) t`,
      b,
    );
    await client.query(
      `insert into pgbench_accounts (aid, bid, abalance, filler)
       select (b - 1) * ${ACCOUNTS_PER_BRANCH} + a, b, 0, ''
       from unnest($1::int[]) b, generate_series(1, ${ACCOUNTS_PER_BRANCH}) a`,
      b,
    );
  } finally {
    await client.end();
  }
  await pgbenchInit(node, 'vp');
}

/** Longest wait for autovacuum workers to finish before a run starts anyway. */
const QUIET_WAIT_MS = 30_000;

/**
 * Brings `node` back to a quiet state before a measured run: the dead rows the previous run left
 * vacuumed, dirty pages checkpointed, no autovacuum worker running. Otherwise a target pays for
 * the writes of the one measured before it (autovacuum and checkpoints sharing the cores with
 * its run), and the rotation of targets between rounds puts the same one after another often.
 */
export async function quietNode(node: NodeAddress): Promise<void> {
  const client = await connectTo(node);
  try {
    await client.query(
      'vacuum pgbench_accounts, pgbench_tellers, pgbench_branches, pgbench_history',
    );
    await client.query('checkpoint');
    const until = Date.now() + QUIET_WAIT_MS;
    while (Date.now() < until) {
      const { rows } = await client.query<{ n: string }>(
        "select count(*) n from pg_stat_activity where backend_type = 'autovacuum worker'",
      );
      if (rows[0]!.n === '0') return;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await client.end();
  }
}
