// The cutover waits, after the fence swap, for writers that began before the swap (writers.ts):
// the time the swap returns must come after its commit, or a transaction that began while the
// swap was committing, and passed the old fence, is not waited for and may commit on the source
// after the marker (then the target gets it after reads moved there). The swap's commit is held
// open here by synchronous replication to a standby that never comes, then let go.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { HASH_MAX, HASH_MIN, functionFenceCheckSql } from '@tessera/keyspace';
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import type pg from 'pg';
import { swapFence } from './fences.js';
import { oidsOf, writersSince } from './writers.js';

let server: PgServer;
const clients: pg.Client[] = [];

before(async () => {
  [server] = (await startPostgresCluster(1, { name: 'mover-writers' })) as [PgServer];
});
after(async () => {
  for (const c of clients) await c.end().catch(() => undefined);
  await server?.dispose();
});

async function connect(syncCommit: 'on' | 'local'): Promise<pg.Client> {
  const c = await server.connect();
  c.on('error', () => undefined);
  clients.push(c);
  await c.query(`set synchronous_commit = ${syncCommit}`);
  return c;
}

test('a writer that began while the fence swap was committing is among the writers waited for', async () => {
  const admin = await connect('local');
  await admin.query('create schema tessera');
  await swapFence(admin, 'ks', [{ lo: HASH_MIN, hi: HASH_MAX }]);
  await admin.query(
    `create table t (k bigint primary key, check (${functionFenceCheckSql('k', 'bigint', 0n, 'ks')}))`,
  );
  await admin.query(`alter system set synchronous_standby_names = 'nobody'`);
  await admin.query('select pg_reload_conf()');
  try {
    const swapper = await connect('on');
    const pid = (await swapper.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!
      .pid;
    // Narrowed to nothing: once it is visible, no row of t may be written.
    const swapped = swapFence(swapper, 'ks', []);
    for (;;) {
      const { rows } = await admin.query<{ w: string | null }>(
        'select wait_event as w from pg_stat_activity where pid = $1',
        [pid],
      );
      if (rows[0]?.w === 'SyncRep') break;
      await new Promise((r) => setTimeout(r, 5));
    }
    // The swap is not visible yet: this writer passes the old fence, and stays open.
    const writer = await connect('local');
    await writer.query('begin');
    await writer.query('insert into t values (1)');
    const writerPid = (await writer.query<{ pid: number }>('select pg_backend_pid() as pid'))
      .rows[0]!.pid;
    await admin.query('select pg_cancel_backend($1)', [pid]);
    const since = await swapped;
    const oids = await oidsOf(admin, ['t']);
    const w = await writersSince(admin, oids, since);
    assert.deepEqual(w.pids, [writerPid], 'the writer that passed the old fence is waited for');
    await writer.query('rollback');
    // And the narrowed fence holds for a writer after the swap.
    await assert.rejects(writer.query('insert into t values (2)'), { code: '23514' });
  } finally {
    await admin.query('alter system reset synchronous_standby_names');
    await admin.query('select pg_reload_conf()');
  }
});
