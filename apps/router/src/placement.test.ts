// Placement: rows written through the router (single-row INSERTs, multi-row INSERTs, prepared
// INSERTs, COPY text and CSV) into a bigint-keyed and a uuid-keyed table land exactly on the
// node owning each key's hash, none lost or duplicated; the fence stops a foreign row.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import postgres from 'postgres';
import { CatalogService, KeyType, createClient, keyTypeName } from '@tessera/proto';
import { hashFunctionName } from '@tessera/keyspace';
import { DEFAULT_TABLES, startTestCluster, type TestCluster } from './testing/cluster.js';

/** Rows per table (the acceptance check's 100,000; TESSERA_PLACEMENT_ROWS to change). */
const ROWS = Number(process.env['TESSERA_PLACEMENT_ROWS'] ?? 100_000);
let c: TestCluster;

before(async () => {
  c = await startTestCluster({
    tables: [
      ...DEFAULT_TABLES,
      { name: 'events', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
    ],
  });
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query('create table events (tenant_id bigint not null, n int not null, note text)');
  await client.query('create table profiles (id uuid not null, n int not null, note text)');
  await client.end();
});
after(async () => {
  await c?.dispose();
});

/** Keys for one table: i -> key text. */
type KeyOf = (i: number) => string;

async function load(table: string, keyCol: string, keyOf: KeyOf): Promise<void> {
  const quarter = Math.floor(ROWS / 4);
  const client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  let i = 0;
  // 1. single-row INSERTs as simple queries (a few hundred: they are slow by nature)
  const singles = Math.min(500, quarter);
  for (; i < singles; i++)
    await client.query(`insert into ${table} (${keyCol}, n) values ('${keyOf(i)}', ${i})`);
  // 2. prepared INSERTs (extended protocol, named)
  for (; i < quarter; i++) {
    await client.query({
      name: `ins-${table}`,
      text: `insert into ${table} (${keyCol}, n) values ($1, $2)`,
      values: [keyOf(i), i],
    });
  }
  // 3. multi-row INSERTs as simple queries, 500 rows each, spanning nodes
  for (; i < 2 * quarter;) {
    const rows: string[] = [];
    for (let k = 0; k < 500 && i < 2 * quarter; k++, i++) rows.push(`('${keyOf(i)}', ${i}, 'x')`);
    await client.query(`insert into ${table} (${keyCol}, n, note) values ${rows.join(', ')}`);
  }
  await client.end();
  // 4. COPY text, 5. COPY CSV with a header (postgres.js streams)
  const sql = postgres(c.url(), { max: 1, onnotice: () => undefined });
  const text = async function* (from: number, to: number) {
    for (let k = from; k < to; k += 1000) {
      let chunk = '';
      for (let j = k; j < Math.min(to, k + 1000); j++) chunk += `${keyOf(j)}\t${j}\tt\\tab\n`;
      yield chunk;
    }
  };
  await pipeline(
    Readable.from(text(i, 3 * quarter)),
    await sql.unsafe(`copy ${table} (${keyCol}, n, note) from stdin`).writable(),
  );
  i = 3 * quarter;
  const csv = async function* (from: number, to: number) {
    yield `${keyCol},note,n\n`;
    for (let k = from; k < to; k += 1000) {
      let chunk = '';
      for (let j = k; j < Math.min(to, k + 1000); j++) chunk += `"${keyOf(j)}","a,""b""\nc",${j}\n`;
      yield chunk;
    }
  };
  await pipeline(
    Readable.from(csv(i, ROWS)),
    await sql
      .unsafe(`copy ${table} (${keyCol}, note, n) from stdin with (format csv, header true)`)
      .writable(),
  );
  await sql.end();
}

/** On each node: rows outside the node's ranges (by the catalog, not the router) and the count. */
async function checkPlacement(table: string, keyCol: string, keyspace: string): Promise<void> {
  const catalogClient = createClient(CatalogService, c.coordinator.address);
  const catalog = await catalogClient.getCatalog({});
  catalogClient.close();
  const ks = catalog.keyspaces.find((k) => k.name === keyspace)!;
  const fn = hashFunctionName(keyTypeName(ks.keyType));
  let total = 0;
  for (const [name, server] of c.byName) {
    const owned = catalog.ranges.filter((r) => r.keyspace === keyspace && r.owner === name);
    const inRange =
      owned.length === 0
        ? 'false'
        : owned.map((r) => `h between '${r.lo}'::int8 and '${r.hi}'::int8`).join(' or ');
    const [row] = await server.query<{ n: string; misplaced: string }>(
      `select count(*) n, count(*) filter (where not (${inRange})) misplaced from (select ${fn}(${keyCol}, '${ks.seed}'::int8) h from ${table}) t`,
    );
    assert.equal(row!.misplaced, '0', `${table} rows misplaced on ${name}`);
    total += Number(row!.n);
  }
  assert.equal(total, ROWS, `${table}: every row exactly once`);
  // Exactly once by key, too (no duplicates hiding behind a lost row).
  let distinct = 0;
  for (const server of c.byName.values())
    distinct += Number(
      (await server.query<{ n: string }>(`select count(distinct n) n from ${table}`))[0]!.n,
    );
  assert.equal(distinct, ROWS);
}

describe('placement', () => {
  test(`bigint keys: ${ROWS} rows`, async () => {
    await load('events', 'tenant_id', (i) => String(i * 7919 - 5_000_000));
    await checkPlacement('events', 'tenant_id', 'tenants');
  });

  test(`uuid keys: ${ROWS} rows`, async () => {
    const keys = Array.from({ length: ROWS }, () => randomUUID());
    await load('profiles', 'id', (i) => keys[i]!);
    await checkPlacement('profiles', 'id', 'users');
  });

  test('a foreign row inserted on a node directly fails the fence', async () => {
    const catalogClient = createClient(CatalogService, c.coordinator.address);
    const catalog = await catalogClient.getCatalog({});
    catalogClient.close();
    assert.ok(catalog.keyspaces.some((k) => k.keyType === KeyType.BIGINT));
    for (const [name, server] of c.byName) {
      // A key some other node owns: find one by asking the node itself for its hash.
      const owned = catalog.ranges.filter((r) => r.keyspace === 'tenants' && r.owner === name);
      const cond =
        owned.length === 0
          ? 'true'
          : `not (${owned.map((r) => `hashint8extended(k, 0) between '${r.lo}'::int8 and '${r.hi}'::int8`).join(' or ')})`;
      const [foreign] = await server.query<{ k: string }>(
        `select k from generate_series(1, 1000) k where ${cond} limit 1`,
      );
      await assert.rejects(
        server.query(`insert into events (tenant_id, n) values (${foreign!.k}, -1)`),
        (e: { code?: string }) => e.code === '23514',
        name,
      );
    }
  });
});
