// The differential oracle's schema and data: every table kind and key type (sharded by bigint,
// int, text and uuid; a colocated pair; a reference table; a global table; an empty table), with
// NULL-heavy columns, loaded with the same deterministic rows into plain Postgres and the cluster.
import { KeyType } from '@tessera/proto';
import type { KeyspaceDecl, TableDecl } from '../cluster.js';

export const ORACLE_KEYSPACES: readonly KeyspaceDecl[] = [
  { name: 'kb', keyType: KeyType.BIGINT, ranges: 6, seed: 3n },
  { name: 'ki', keyType: KeyType.INT, ranges: 4, seed: 5n },
  { name: 'kt', keyType: KeyType.TEXT, ranges: 4, seed: 7n },
  { name: 'ku', keyType: KeyType.UUID, ranges: 4, seed: 11n },
];

export const ORACLE_TABLES: readonly TableDecl[] = [
  { name: 'accounts', kind: 'sharded', keyspace: 'kb', keyColumn: 'id' },
  { name: 'orders', kind: 'sharded', keyspace: 'kb', keyColumn: 'account_id' },
  { name: 'empties', kind: 'sharded', keyspace: 'kb', keyColumn: 'id' },
  { name: 'counters', kind: 'sharded', keyspace: 'ki', keyColumn: 'k' },
  { name: 'words', kind: 'sharded', keyspace: 'kt', keyColumn: 'w' },
  { name: 'devices', kind: 'sharded', keyspace: 'ku', keyColumn: 'id' },
  { name: 'regions', kind: 'reference' },
];

export const ORACLE_DDL = [
  `create table accounts (id bigint primary key, grp text, name text, score int, amount numeric(10,2),
     flag bool, created date, region text)`,
  `create table orders (account_id bigint not null, id int not null, qty int, price numeric(8,2),
     status text, primary key (account_id, id))`,
  `create table empties (id bigint primary key, v int, t text)`,
  `create table counters (k int primary key, v int, label text)`,
  `create table words (w text primary key, n int, tag text)`,
  `create table devices (id uuid primary key, kind text, reading float8, seq int not null)`,
  `create table regions (code text primary key, name text, rank int)`,
  `create table settings_g (k text primary key, v int)`,
];

/** A small deterministic generator (mulberry32): the same seed gives the same numbers. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const lit = (v: string | number | boolean | null): string =>
  v === null ? 'null' : typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v);

function uuidOf(i: number): string {
  const h = (n: number) => ((n * 2654435761) >>> 0).toString(16).padStart(8, '0');
  const x = h(i) + h(i + 7) + h(i + 13) + h(i + 29);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export const ACCOUNT_COUNT = 240;
const NAMES = ['alpha', 'Beta', 'gamma', 'delta', 'émile', 'Zürich', 'apple', 'a b', 'zeta', ''];
const GROUPS = ['g0', 'g1', 'g2', 'g3', 'g4'];
export const REGION_CODES = ['eu', 'us', 'ap', 'sa', 'af'];
export const WORDS = Array.from({ length: 90 }, (_, i) => `w${(i * 37) % 1000}${'xyz'[i % 3]}`);

/** INSERT statements (multi-row, a key column list) loading every table, in order. */
export function oracleInserts(): string[] {
  const r = prng(20240601);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out: string[] = [];
  const batch = (table: string, cols: string, rows: string[]) => {
    for (let i = 0; i < rows.length; i += 200)
      out.push(`insert into ${table} (${cols}) values ${rows.slice(i, i + 200).join(', ')}`);
  };
  const accounts: string[] = [];
  for (let i = 1; i <= ACCOUNT_COUNT; i++) {
    const id = i % 17 === 0 ? -i * 1000003 : i;
    accounts.push(
      `(${[
        id,
        r() < 0.3 ? null : pick(GROUPS),
        r() < 0.15 ? null : pick(NAMES),
        r() < 0.2 ? null : Math.floor(r() * 200) - 50,
        r() < 0.2 ? null : (Math.floor(r() * 100000) / 100 - 300).toFixed(2),
        r() < 0.25 ? null : r() < 0.5,
        r() < 0.1
          ? null
          : new Date(Date.UTC(2021, 0, 1) + Math.floor(r() * 700) * 86_400_000)
              .toISOString()
              .slice(0, 10),
        r() < 0.2 ? null : pick(REGION_CODES),
      ]
        .map((v) => lit(v))
        .join(', ')})`,
    );
  }
  batch('accounts', 'id, grp, name, score, amount, flag, created, region', accounts);
  const orders: string[] = [];
  for (let i = 1; i <= ACCOUNT_COUNT; i++) {
    if (i % 5 === 0) continue; // accounts without orders (outer joins)
    const id = i % 17 === 0 ? -i * 1000003 : i;
    const n = 1 + Math.floor(r() * 4);
    for (let k = 1; k <= n; k++)
      orders.push(
        `(${id}, ${k}, ${r() < 0.15 ? 'null' : Math.floor(r() * 20)}, ${
          r() < 0.15 ? 'null' : (Math.floor(r() * 50000) / 100).toFixed(2)
        }, ${lit(r() < 0.2 ? null : pick(['new', 'paid', 'shipped', 'void']))})`,
      );
  }
  batch('orders', 'account_id, id, qty, price, status', orders);
  const counters: string[] = [];
  for (let k = -40; k <= 120; k++)
    counters.push(
      `(${k}, ${r() < 0.2 ? 'null' : Math.floor(r() * 1000) - 300}, ${lit(r() < 0.3 ? null : pick(NAMES))})`,
    );
  batch('counters', 'k, v, label', counters);
  batch(
    'words',
    'w, n, tag',
    WORDS.map(
      (w) =>
        `(${lit(w)}, ${r() < 0.2 ? 'null' : Math.floor(r() * 50)}, ${lit(r() < 0.3 ? null : pick(GROUPS))})`,
    ),
  );
  const devices: string[] = [];
  for (let i = 0; i < 120; i++)
    devices.push(
      `('${uuidOf(i)}', ${lit(r() < 0.2 ? null : pick(['cam', 'gps', 'temp']))}, ${
        r() < 0.2 ? 'null' : (Math.floor(r() * 10000) / 16 - 100).toString()
      }, ${i})`,
    );
  batch('devices', 'id, kind, reading, seq', devices);
  batch(
    'regions',
    'code, name, rank',
    REGION_CODES.concat(['zz']).map(
      (c, i) => `(${lit(c)}, ${lit(`Region ${c.toUpperCase()}`)}, ${i % 3 === 0 ? 'null' : i})`,
    ),
  );
  batch(
    'settings_g',
    'k, v',
    ['a', 'b', 'c'].map((k, i) => `(${lit(k)}, ${i * 10})`),
  );
  return out;
}

export const SAMPLE_UUIDS = Array.from({ length: 120 }, (_, i) => uuidOf(i));
