import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pauseServer, resumeServer, startReplicatedPostgres } from './index.js';

test('a commit acknowledged with synchronous_commit=on is already flushed on the sync standby', async () => {
  const rp = await startReplicatedPostgres({ name: 'sync' });
  const [replica] = rp.replicas;
  assert.ok(replica);
  try {
    const [rep] = await rp.primary.query<{ application_name: string; sync_state: string }>(
      'select application_name, sync_state from pg_stat_replication',
    );
    assert.equal(rep?.application_name, replica.applicationName);
    assert.equal(rep?.sync_state, 'sync');
    const [{ sc } = { sc: '' }] = await rp.primary.query<{ sc: string }>(
      `select current_setting('synchronous_commit') as sc`,
    );
    assert.equal(sc, 'on');

    await rp.primary.query('create table t (id int primary key)');
    const writer = await rp.primary.connect();
    const standby = await replica.connect();
    try {
      for (let i = 1; i <= 50; i++) {
        await writer.query('begin');
        await writer.query('insert into t values ($1)', [i]);
        const { rows } = await writer.query<{ lsn: string }>(
          'select pg_current_wal_insert_lsn()::text as lsn',
        );
        await writer.query('commit');
        // The commit record lies after `lsn`; the standby reports what it has flushed.
        const flushed = await standby.query<{ ok: boolean }>(
          'select pg_last_wal_receive_lsn() >= $1::pg_lsn as ok',
          [rows[0]!.lsn],
        );
        assert.equal(
          flushed.rows[0]?.ok,
          true,
          `commit ${i} acknowledged before the standby had it`,
        );
      }
    } finally {
      await writer.end();
      await standby.end();
    }

    // The primary dies at once; the promoted standby has every acknowledged row.
    await rp.primary.stop('kill');
    await replica.query('select pg_promote(true, 60)');
    const [count] = await replica.query<{ n: string }>('select count(*)::text as n from t');
    assert.equal(count?.n, '50');
    await replica.query('insert into t values (51)'); // and takes writes as the new primary
  } finally {
    await rp.dispose();
  }
});

test('a commit waits while the synchronous standby is frozen, and completes when it thaws', async () => {
  const rp = await startReplicatedPostgres({ name: 'frozen' });
  const [replica] = rp.replicas;
  assert.ok(replica);
  try {
    await rp.primary.query('create table t (id int)');
    assert.ok(pauseServer(replica) > 0);
    let done = false;
    const commit = rp.primary.query('insert into t values (1)').then(() => (done = true));
    await sleep(1_500);
    assert.equal(done, false, 'the commit was acknowledged while the standby was frozen');
    resumeServer(replica);
    await commit;
    assert.equal(done, true);
  } finally {
    resumeServer(replica);
    await rp.dispose();
  }
});
