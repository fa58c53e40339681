// The store against a real Postgres: migrations that two coordinators may run at once, the
// validation every change passes before commit, and the leader-lock fence on writes.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { CatalogInvalidError, HASH_MIN } from '@tessera/keyspace';
import {
  create,
  AddNodeRequestSchema,
  CreateKeyspaceRequestSchema,
  KeyType,
  NodeRole,
} from '@tessera/proto';
import pg from 'pg';
import { CatalogError } from '../errors.js';
import { freshDatabase, startPostgres, type PgServer } from '../testing.js';
import { CatalogStore, LEADER_LOCK } from './catalog-store.js';
import { createPool, withClient } from './db.js';
import { createKeyspace } from './keyspace-changes.js';
import { migrate, LATEST_SCHEMA_VERSION } from './migrations.js';
import { addNode } from './node-changes.js';

let server: PgServer;
before(async () => {
  server = await startPostgres({ name: 'store' });
});
after(() => server.dispose());

async function migratedPool(): Promise<pg.Pool> {
  const pool = createPool(await freshDatabase(server));
  await withClient(pool, migrate);
  return pool;
}

test('migrations are idempotent and safe to run from several connections at once', async () => {
  const pool = createPool(await freshDatabase(server), { max: 6 });
  try {
    const results = await Promise.all(Array.from({ length: 5 }, () => withClient(pool, migrate)));
    assert.deepEqual(
      results.flat().sort((a, b) => a - b),
      Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1),
      'each migration was applied by exactly one run',
    );
    assert.deepEqual(await withClient(pool, migrate), []);
    const versions = await pool.query('select version from tessera.schema_version');
    assert.equal(versions.rowCount, LATEST_SCHEMA_VERSION);
    const meta = await pool.query<{ epoch: string; cluster_uid: string }>(
      'select epoch::text, cluster_uid from tessera.meta',
    );
    assert.equal(meta.rows.length, 1);
    assert.equal(meta.rows[0]!.epoch, '1');
    assert.match(meta.rows[0]!.cluster_uid, /^[0-9a-f-]{36}$/);
  } finally {
    await pool.end();
  }
});

test('a change that would leave a gap or an overlap is refused and changes nothing', async () => {
  const pool = await migratedPool();
  try {
    const store = new CatalogStore(pool);
    await store.change((tx) =>
      addNode(
        tx,
        create(AddNodeRequestSchema, {
          name: 'home',
          host: '127.0.0.1',
          port: 5432,
          role: NodeRole.HOME,
        }),
      ),
    );
    const { epoch } = await store.change((tx) =>
      createKeyspace(
        tx,
        create(CreateKeyspaceRequestSchema, { name: 'k', keyType: KeyType.BIGINT, ranges: 4 }),
      ),
    );
    const before = await store.read();
    assert.equal(before.epoch, epoch);

    // A gap: one range deleted behind the admin rules' back.
    await assert.rejects(
      store.change(async (tx) => {
        await tx.client.query('delete from tessera.range where keyspace = $1 and lo = $2', [
          'k',
          HASH_MIN.toString(),
        ]);
        tx.touch('k');
      }),
      (e: unknown) =>
        e instanceof CatalogInvalidError && /does not start at HASH_MIN/.test(e.message),
    );
    // An overlap: a second range over part of an existing one.
    await assert.rejects(
      store.change(async (tx) => {
        await tx.client.query(
          `update tessera.range set hi = hi + 10 where keyspace = 'k' and lo = $1`,
          [HASH_MIN.toString()],
        );
        tx.touch('k');
      }),
      (e: unknown) => e instanceof CatalogInvalidError && /overlapping ranges/.test(e.message),
    );
    const afterRefusals = await store.read();
    assert.equal(afterRefusals.epoch, before.epoch, 'epoch unchanged');
    assert.deepEqual(afterRefusals.ranges, before.ranges, 'ranges unchanged');
  } finally {
    await pool.end();
  }
});

test('a coordinator whose lock connection is gone cannot change the catalog (fence)', async () => {
  const url = await freshDatabase(server);
  const pool = createPool(url);
  const lockConn = new pg.Client({ connectionString: url });
  try {
    await withClient(pool, migrate);
    await lockConn.connect();
    const { rows } = await lockConn.query<{ pid: number }>(
      'select pg_advisory_lock($1, $2), pg_backend_pid() as pid',
      [...LEADER_LOCK],
    );
    const pid = rows[0]!.pid;
    const store = new CatalogStore(pool, { leaderPid: () => pid });
    const addHome = (tx: Parameters<Parameters<CatalogStore['change']>[0]>[0]) =>
      addNode(
        tx,
        create(AddNodeRequestSchema, {
          name: 'home',
          host: '127.0.0.1',
          port: 5432,
          role: NodeRole.HOME,
        }),
      );
    const ok = await store.change(addHome);
    assert.equal(ok.epoch, 2n);
    await lockConn.end(); // the lock goes with its session
    await assert.rejects(
      store.change(async () => undefined),
      (e: unknown) =>
        e instanceof CatalogError &&
        e.code === 'UNAVAILABLE' &&
        /no longer holds the leader lock/.test(e.message),
    );
    assert.equal(await store.epoch(), 2n);
  } finally {
    await lockConn.end().catch(() => undefined);
    await pool.end();
  }
});
