// The fence as a real CHECK constraint on Postgres 15: rows whose key hashes into the owned
// ranges go in, every other row is refused with check_violation; the function-based fence and
// its lock-free swap; the move publication's row filter.
import { test, before, after } from 'node:test';
import { strict as assert } from 'node:assert';
import type pg from 'pg';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { hashKeyText } from '@tessera/pg-hash';
import {
  evenRanges,
  fenceCheckSql,
  functionFenceCheckSql,
  functionFenceStatementSql,
  isFunctionFence,
  ownsFunctionName,
  ownsFunctionSql,
  rowFilterSql,
  HASH_MAX,
  HASH_MIN,
  type KeyTypeName,
} from './index.js';

const SEED = -7046029254386353131n;

const COLUMN_TYPE: Record<KeyTypeName, string> = {
  bigint: 'bigint',
  int: 'integer',
  smallint: 'smallint',
  text: 'varchar(200)',
  uuid: 'uuid',
};

function keys(keyType: KeyTypeName, count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    switch (keyType) {
      case 'bigint':
        return String(BigInt(i) * 7919n * 1_000_000_007n - 2n ** 62n);
      case 'int':
        return String(i * 104_729 - 2 ** 30);
      case 'smallint':
        return String(i * 257 - 32_000);
      case 'text':
        return `key-${i}-ключ-😀`;
      case 'uuid':
        return `${(0x10000000 + i * 7_654_321).toString(16).slice(-8)}-0000-4000-8000-${String(i).padStart(12, '0')}`;
    }
  });
}

let server: PgServer;
let client: pg.Client;

before(async () => {
  server = await startPostgres({ name: 'fence' });
  client = await server.connect();
});

after(async () => {
  await client?.end();
  await server?.dispose();
});

async function tryInsert(table: string, key: string): Promise<'ok' | 'refused'> {
  try {
    await client.query(`insert into ${table} (k) values ($1)`, [key]);
    return 'ok';
  } catch (e) {
    assert.equal((e as { code?: string }).code, '23514', String(e));
    return 'refused';
  }
}

for (const keyType of ['bigint', 'int', 'smallint', 'text', 'uuid'] as const) {
  test(`the ${keyType} fence admits exactly the keys whose hash it owns`, async () => {
    const table = `fenced_${keyType}`;
    // This node owns ranges 1 and 3 of four, and the very last hash (as its own range).
    const all = evenRanges(4);
    const owned = [all[1]!, { lo: all[3]!.lo, hi: HASH_MAX - 1n }, { lo: HASH_MAX, hi: HASH_MAX }];
    await client.query(`create table ${table} (k ${COLUMN_TYPE[keyType]} not null)`);
    await client.query(
      `alter table ${table} add constraint tessera_owns check (${fenceCheckSql('k', keyType, SEED, owned)}) not valid`,
    );
    let admitted = 0;
    let refused = 0;
    for (const key of keys(keyType, 200)) {
      const hash = hashKeyText(keyType, key, SEED);
      const inside = owned.some((r) => r.lo <= hash && hash <= r.hi);
      assert.equal(
        await tryInsert(table, key),
        inside ? 'ok' : 'refused',
        `${keyType} key ${key} hash ${hash}`,
      );
      if (inside) admitted++;
      else refused++;
    }
    assert.ok(admitted > 20 && refused > 20, `admitted ${admitted}, refused ${refused}`);
  });
}

test('a fence owning nothing refuses every row; one owning everything admits every row', async () => {
  await client.query(`create table fenced_none (k bigint)`);
  await client.query(
    `alter table fenced_none add constraint tessera_owns check (${fenceCheckSql('k', 'bigint', 1n, [])}) not valid`,
  );
  await client.query(`create table fenced_all (k bigint)`);
  const everything = [{ lo: HASH_MIN, hi: HASH_MAX }];
  await client.query(
    `alter table fenced_all add constraint tessera_owns check (${fenceCheckSql('k', 'bigint', 1n, everything)}) not valid`,
  );
  for (const key of keys('bigint', 50)) {
    assert.equal(await tryInsert('fenced_none', key), 'refused');
    assert.equal(await tryInsert('fenced_all', key), 'ok');
  }
});

test('a fence over single hashes at both ends of the space admits exactly the keys there', async () => {
  // Find keys whose hashes Postgres puts in each owned slice, then fence on their exact hashes.
  const [a, b] = keys('bigint', 2).map((k) => hashKeyText('bigint', k, 0n));
  const owned = [
    { lo: HASH_MIN, hi: HASH_MIN },
    { lo: a!, hi: a! },
    { lo: b!, hi: b! },
    { lo: HASH_MAX, hi: HASH_MAX },
  ];
  await client.query(`create table fenced_points (k bigint)`);
  await client.query(
    `alter table fenced_points add constraint tessera_owns check (${fenceCheckSql('k', 'bigint', 0n, owned)}) not valid`,
  );
  const [first, second, third] = keys('bigint', 3);
  assert.equal(await tryInsert('fenced_points', first!), 'ok');
  assert.equal(await tryInsert('fenced_points', second!), 'ok');
  assert.equal(await tryInsert('fenced_points', third!), 'refused');
});

test('the function-based fence admits what its function says, and a swap needs no table lock', async () => {
  const all = evenRanges(4);
  await client.query(`create table ffenced (k bigint primary key, v text)`);
  await client.query('create schema if not exists tessera');
  await client.query(ownsFunctionSql('acct', [all[0]!, all[1]!]));
  await client.query(
    `alter table ffenced add constraint tessera_owns check (${functionFenceCheckSql('k', 'bigint', SEED, 'acct')}) not valid`,
  );
  const ks = keys('bigint', 120);
  const owned = (key: string, ranges: { lo: bigint; hi: bigint }[]) => {
    const h = hashKeyText('bigint', key, SEED);
    return ranges.some((r) => r.lo <= h && h <= r.hi);
  };
  for (const key of ks.slice(0, 40))
    assert.equal(
      await tryInsert('ffenced', key),
      owned(key, [all[0]!, all[1]!]) ? 'ok' : 'refused',
    );

  // Another session holds ACCESS EXCLUSIVE on the table: the swap must still go through at
  // once, since it touches only the function.
  const other = await server.connect();
  try {
    await other.query('begin');
    await other.query('lock table ffenced in access exclusive mode');
    await client.query(`set lock_timeout = '200ms'`);
    await client.query(ownsFunctionSql('acct', [all[1]!]));
    await client.query('reset lock_timeout');
    await other.query('rollback');

    // A writer whose transaction began before the swap sees the new body at its next statement.
    await other.query('begin');
    await other.query('select 1');
    await client.query(ownsFunctionSql('acct', [all[2]!]));
    let refused = 0;
    for (const key of ks.slice(40, 80)) {
      try {
        await other.query('savepoint s');
        await other.query('insert into ffenced (k) values ($1)', [key]);
        assert.ok(owned(key, [all[2]!]), `key ${key} went in outside the new fence`);
      } catch (e) {
        assert.equal((e as { code?: string }).code, '23514');
        assert.ok(!owned(key, [all[2]!]));
        refused++;
        await other.query('rollback to savepoint s');
      }
    }
    assert.ok(refused > 5, `refused ${refused}`);
    await other.query('commit');
  } finally {
    await other.end();
  }
});

test('the fence statement for CREATE TABLE creates a missing function once and never replaces one', async () => {
  const all = evenRanges(2);
  await client.query(`create table fs1 (k text not null)`);
  await client.query(`create table fs2 (k text not null)`);
  const stmt = (table: string, ranges: { lo: bigint; hi: bigint }[]) =>
    functionFenceStatementSql(table, 'k', 'text', 3n, 'Tenants Ü', ranges);
  await client.query(stmt('fs1', [all[0]!]));
  await client.query(stmt('fs1', [all[0]!])); // idempotent
  // A second table with other ranges (a stale router, say) does not overwrite the function.
  await client.query(stmt('fs2', [all[1]!]));
  const fn = ownsFunctionName('Tenants Ü');
  assert.match(fn, /^tessera\.owns_x[0-9a-f]{16}$/);
  const defs = await client.query<{ def: string }>(
    `select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'tessera_owns' and conrelid in ('fs1'::regclass, 'fs2'::regclass)`,
  );
  assert.equal(defs.rows.length, 2);
  for (const d of defs.rows) assert.ok(isFunctionFence(d.def, 'Tenants Ü'), d.def);
  for (const key of keys('text', 60)) {
    const inLower = hashKeyText('text', key, 3n) <= all[0]!.hi;
    assert.equal(await tryInsert('fs2', key), inLower ? 'ok' : 'refused', key);
  }
});

test('a move publication accepts the row filter and selects exactly the rows the fence admits', async () => {
  const all = evenRanges(4);
  await client.query(`create table pubbed (k text primary key)`);
  const ks = keys('text', 200);
  for (const key of ks) await client.query('insert into pubbed values ($1)', [key]);
  const filter = rowFilterSql('k', 'text', SEED, all[1]!);
  await client.query(`create publication move_test for table pubbed where (${filter})`);
  const { rows } = await client.query<{ n: string }>(
    `select count(*)::text as n from pubbed where ${filter}`,
  );
  const expected = ks.filter((key) => {
    const h = hashKeyText('text', key, SEED);
    return all[1]!.lo <= h && h <= all[1]!.hi;
  }).length;
  assert.equal(Number(rows[0]!.n), expected);
  assert.ok(expected > 20);
  await client.query('drop publication move_test');
});
