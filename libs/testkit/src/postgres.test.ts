import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startPostgres, startPostgresCluster } from './index.js';

test('a server starts with the node settings, answers, and is removed on dispose', async () => {
  const pg = await startPostgres({ name: 'kit' });
  try {
    const rows = await pg.query<{ wal_level: string }>('show wal_level');
    assert.equal(rows[0]?.wal_level, 'logical');
    const [mpt] = await pg.query<{ max_prepared_transactions: string }>(
      'show max_prepared_transactions',
    );
    assert.ok(Number(mpt?.max_prepared_transactions) > 0);
    const [listen] = await pg.query<{ listen_addresses: string }>('show listen_addresses');
    assert.equal(listen?.listen_addresses, '127.0.0.1');
  } finally {
    await pg.dispose();
  }
  assert.equal(existsSync(pg.dataDir), false);
});

test('a stopped server keeps its data and starts again on the same port', async () => {
  const pg = await startPostgres();
  try {
    await pg.query('create table t (x int); insert into t values (42)');
    await pg.stop('fast');
    await pg.start();
    const rows = await pg.query<{ x: number }>('select x from t');
    assert.deepEqual(rows, [{ x: 42 }]);
  } finally {
    await pg.dispose();
  }
});

test('several servers start in parallel on distinct ports', async () => {
  const nodes = await startPostgresCluster(3);
  try {
    assert.equal(new Set(nodes.map((n) => n.port)).size, 3);
    for (const n of nodes) assert.equal((await n.query('select 1 as one'))[0]?.one, 1);
  } finally {
    await Promise.all(nodes.map((n) => n.dispose()));
  }
});
