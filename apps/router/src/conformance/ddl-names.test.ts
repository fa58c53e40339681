// DDL changes what unqualified names resolve to, differential: the same statements through
// node-postgres (simple and named extended statements) against the router and one plain
// Postgres. DDL through another router of the cluster is seen by this router's sessions before
// that DDL's client hears it is done; DDL inside a session's own transaction is seen by its next
// statements in that transaction (and is gone again after a rollback), as Postgres resolves it;
// COPY after DDL in its transaction is not kept waiting for the transaction's end; extended DDL
// ended by a Flush is announced by the Sync that commits it, not before.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  BackendCode,
  Writer,
  writeBind,
  writeExecute,
  writeFlush,
  writeParse,
  writeSync,
} from '@tessera/pg-wire';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import type { RunningRouter } from '../router.js';
import { startSecondRouter, startTestCluster, type TestCluster } from '../testing/cluster.js';
import { RawClient } from '../testing/raw-client.js';
import {
  openDriver,
  type DriverMode,
  type DriverSession,
  type Outcome,
  setUpBoth,
} from '../testing/drivers.js';

let c: TestCluster;
let second: RunningRouter;
let plain: PgServer;

const SETUP = [
  'create table public.t (tenant_id bigint primary key, v text)',
  "insert into public.t values (1, 'p1'), (2, 'p2'), (3, 'p3'), (4, 'p4')",
];

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({
      keyspaces: [{ name: 'tenants', keyType: KeyType.BIGINT, ranges: 4 }],
      tables: [{ name: 't', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' }],
    }),
    startPostgres({ name: 'ddl-names-plain' }),
  ]);
  second = await startSecondRouter(c);
  await setUpBoth(c.url(), plain, SETUP);
});
after(async () => {
  await second?.stop();
  await c?.dispose();
  await plain?.dispose();
});

const plainUrl = (): string => `postgres://postgres@127.0.0.1:${plain.port}/postgres`;
const secondUrl = (): string => `postgres://postgres@127.0.0.1:${second.port}/postgres`;

const shown = (o: Outcome): unknown => ({
  rows: o.rows,
  sqlstate: o.sqlstate,
  ...(o.sqlstate !== undefined ? { message: o.message } : {}),
});

/** Runs each statement on both sessions and compares rows and SQLSTATEs. */
async function same(
  router: DriverSession,
  direct: DriverSession,
  statements: readonly string[],
): Promise<void> {
  for (const sql of statements) {
    const [g, w] = [await router.run(sql), await direct.run(sql)];
    assert.deepEqual(
      { rows: g.rows, sqlstate: g.sqlstate },
      { rows: w.rows, sqlstate: w.sqlstate },
      `${sql}: router ${JSON.stringify(shown(g))} vs Postgres ${JSON.stringify(shown(w))}`,
    );
  }
}

/** The same DDL through both, each expected to succeed. */
async function ddl(
  router: DriverSession,
  direct: DriverSession,
  statements: readonly string[],
): Promise<void> {
  for (const sql of statements) {
    const [g, w] = [await router.run(sql), await direct.run(sql)];
    assert.equal(g.sqlstate, undefined, `${sql}: ${g.message}`);
    assert.equal(w.sqlstate, undefined, `${sql}: ${w.message}`);
  }
}

const MODES: readonly DriverMode[] = ['pg-simple', 'pg-named'];

describe('DDL through another router is seen before its client hears it is done', () => {
  for (const mode of MODES)
    test(`a schema and a global table shadow sharded public.t (${mode})`, async () => {
      const schema = `other_${mode.replace('-', '_')}`;
      const steps = [
        `set search_path = ${schema}, public`,
        'select count(*)::int as n from t',
        'select tenant_id, v from t order by 1',
      ];
      const [here, direct, there, otherDirect] = await Promise.all([
        openDriver(mode, c.url()),
        openDriver(mode, plainUrl()),
        openDriver(mode, secondUrl()),
        openDriver(mode, plainUrl()),
      ]);
      try {
        await same(here, direct, steps);
        await ddl(there, otherDirect, [
          `create schema ${schema}`,
          `create table ${schema}.t (tenant_id bigint, v text)`,
          `insert into ${schema}.t values (7, 'other')`,
        ]);
        // At once: no wait between the other router's answer and this statement.
        await same(here, direct, steps);
        assert.deepEqual((await here.run('select count(*)::int as n from t')).rows, [{ n: 1 }]);
        await ddl(there, otherDirect, [`drop table ${schema}.t`]);
        await same(here, direct, steps);
      } finally {
        for (const d of [here, direct, there, otherDirect]) await d.end();
      }
    });
});

describe("DDL in the session's own transaction is seen by its next statements", () => {
  for (const mode of MODES) {
    const schema = `own_${mode.replace('-', '_')}`;
    test(`committed: the new table shadows public.t inside and after the transaction (${mode})`, async () => {
      const [here, direct] = await Promise.all([
        openDriver(mode, c.url()),
        openDriver(mode, plainUrl()),
      ]);
      try {
        await same(here, direct, ['select count(*)::int as n from t']);
        await same(here, direct, [
          'begin',
          `create schema ${schema}`,
          `create table ${schema}.t (tenant_id bigint, v text)`,
          `insert into ${schema}.t values (9, 'own')`,
          `set local search_path = ${schema}, public`,
          'select count(*)::int as n from t',
          'select tenant_id, v from t order by 1',
          'commit',
          'select count(*)::int as n from t',
          `set search_path = ${schema}, public`,
          'select tenant_id, v from t order by 1',
        ]);
        assert.deepEqual((await here.run('select count(*)::int as n from t')).rows, [{ n: 1 }]);
      } finally {
        await here.end();
        await direct.end();
      }
    });
    test(`rolled back: the table is gone again and public.t answers (${mode})`, async () => {
      const [here, direct] = await Promise.all([
        openDriver(mode, c.url()),
        openDriver(mode, plainUrl()),
      ]);
      try {
        await same(here, direct, [
          `set search_path = ${schema}_rb, public`,
          'select count(*)::int as n from t',
          'begin',
          `create schema ${schema}_rb`,
          `create table ${schema}_rb.t (tenant_id bigint, v text)`,
          'select count(*)::int as n from t',
          'rollback',
          'select count(*)::int as n from t',
          'select tenant_id, v from t order by 1',
        ]);
        assert.deepEqual((await here.run('select count(*)::int as n from t')).rows, [{ n: 4 }]);
      } finally {
        await here.end();
        await direct.end();
      }
    });
  }
});

/** psql's output for the script `input` (COPY data inline) against `url`; 20 s at most. */
async function psql(url: string, args: readonly string[], input: string): Promise<string> {
  const child = execFile(
    '/usr/lib/postgresql/15/bin/psql',
    ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, ...args],
    { timeout: 20_000 },
  );
  child.stdin!.end(input);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  return `${out}exit ${code}`;
}

describe('COPY after DDL is answered at once (the announce waits for the end only)', () => {
  test('DDL, then COPY in the same transaction (psql, as pgbench -i does)', async () => {
    const inTxn = [
      'begin;',
      'create table public.copy_txn (tenant_id bigint, v text);',
      'copy public.copy_txn from stdin;',
      '1\ta',
      '2\tb',
      '\\.',
      'truncate public.copy_txn;',
      'copy public.copy_txn from stdin;',
      '3\tc',
      '\\.',
      'commit;',
      'select count(*), max(v) from public.copy_txn;',
      '',
    ].join('\n');
    const [g, w] = [await psql(c.url(), [], inTxn), await psql(plainUrl(), [], inTxn)];
    assert.equal(g, w);
    assert.equal(g, '1|c\nexit 0');
  });
});

describe('extended DDL ended by a Flush is announced by the Sync that commits it', () => {
  test('another router sees the table only after the Sync, as Postgres does', async () => {
    const steps = ['set search_path = flush_s, public', 'select count(*)::int as n from t'];
    const [there, direct] = await Promise.all([
      openDriver('pg-simple', secondUrl()),
      openDriver('pg-simple', plainUrl()),
    ]);
    const [raw, rawDirect] = await Promise.all([
      RawClient.login(c.router.port),
      RawClient.login(plain.port),
    ]);
    try {
      await ddl(there, direct, ['create schema flush_s']);
      await same(there, direct, steps);
      const w = new Writer();
      writeParse(w, '', 'create table flush_s.t (tenant_id bigint, v text)', []);
      writeBind(w, {});
      writeExecute(w);
      const batch = writeFlush(w).flush();
      for (const r of [raw, rawDirect]) {
        r.send(batch);
        await r.until((f) => f.code === BackendCode.CommandComplete);
      }
      // Not committed yet: public.t still answers.
      await same(there, direct, steps);
      for (const r of [raw, rawDirect]) {
        r.send(writeSync(new Writer()).flush());
        await r.until((f) => f.code === BackendCode.ReadyForQuery);
        assert.deepEqual(r.errors(), []);
      }
      await same(there, direct, steps);
      assert.deepEqual((await there.run('select count(*)::int as n from t')).rows, [{ n: 0 }]);
    } finally {
      raw.end();
      rawDirect.end();
      await there.end();
      await direct.end();
    }
  });
});
