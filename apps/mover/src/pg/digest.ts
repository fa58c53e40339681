// Verification digests (research/moves.md 2): per chunk of the range's hash space, on both
// snapshots, the row count and two order-independent digests of each row's text (two seeds of
// hashtextextended, about 128 bits), with the columns in name order so two tables whose columns
// were added in another order still compare. A chunk that differs is bisected down to rows and
// the keys that differ are reported.
import { keyHashSql } from '@tessera/keyspace';
import type pg from 'pg';
import type { KeyspaceInfo } from '../move/catalog-view.js';
import { ident, qualified } from '../nodes/sessions.js';

export interface DigestTable {
  schema: string;
  name: string;
  keyColumn: string;
  /** In name order. */
  columns: readonly string[];
}

export interface Digest {
  rows: number;
  d0: string;
  d1: string;
}

export interface Mismatch {
  table: string;
  lo: string;
  hi: string;
  sourceRows: number;
  targetRows: number;
  /** Keys (as text) found on the source only, on the target only, or on both but different. */
  missingOnTarget: string[];
  extraOnTarget: string[];
  changed: string[];
}

const ROW_LIMIT = 2_000;
const MAX_KEYS = 20;

function rowText(t: DigestTable): string {
  return `row(${t.columns.map((c) => `x.${ident(c)}`).join(', ')})::text`;
}

function whereRange(t: DigestTable, ks: KeyspaceInfo): string {
  return `${keyHashSql(`x.${ident(t.keyColumn)}`, ks.keyType, ks.seed)} between $1::int8 and $2::int8`;
}

export async function digest(
  c: pg.ClientBase,
  t: DigestTable,
  ks: KeyspaceInfo,
  lo: bigint,
  hi: bigint,
): Promise<Digest> {
  const text = rowText(t);
  const { rows } = await c.query<{ n: string; d0: string; d1: string }>(
    `select count(*)::text as n,
            coalesce(sum(hashtextextended(${text}, 0)::numeric), 0)::text as d0,
            coalesce(sum(hashtextextended(${text}, 1)::numeric), 0)::text as d1
       from ${qualified(t.schema, t.name)} x where ${whereRange(t, ks)}`,
    [lo.toString(), hi.toString()],
  );
  const r = rows[0]!;
  return { rows: Number(r.n), d0: r.d0, d1: r.d1 };
}

export function same(a: Digest, b: Digest): boolean {
  return a.rows === b.rows && a.d0 === b.d0 && a.d1 === b.d1;
}

/** [lo, hi] cut into `n` nearly equal pieces (n >= 1). */
export function chunks(lo: bigint, hi: bigint, n: number): { lo: bigint; hi: bigint }[] {
  const width = hi - lo + 1n;
  const parts = BigInt(Math.max(1, Math.min(n, Number(width < 1_000_000n ? width : 1_000_000n))));
  const out: { lo: bigint; hi: bigint }[] = [];
  for (let i = 0n; i < parts; i++) {
    const a = lo + (width * i) / parts;
    const b = lo + (width * (i + 1n)) / parts - 1n;
    out.push({ lo: a, hi: b });
  }
  return out;
}

async function rowsOf(
  c: pg.ClientBase,
  t: DigestTable,
  ks: KeyspaceInfo,
  lo: bigint,
  hi: bigint,
): Promise<Map<string, string>> {
  const { rows } = await c.query<{ k: string; h: string }>(
    `select x.${ident(t.keyColumn)}::text as k, string_agg(hashtextextended(${rowText(t)}, 0)::text, ',' order by 1) as h
       from ${qualified(t.schema, t.name)} x where ${whereRange(t, ks)} group by 1`,
    [lo.toString(), hi.toString()],
  );
  return new Map(rows.map((r) => [r.k, r.h]));
}

/** Finds the rows that differ in a chunk whose digests differ. */
export async function bisect(
  source: pg.ClientBase,
  target: pg.ClientBase,
  t: DigestTable,
  ks: KeyspaceInfo,
  lo: bigint,
  hi: bigint,
  a: Digest,
  b: Digest,
  depth = 0,
): Promise<Mismatch> {
  const m: Mismatch = {
    table: `${t.schema}.${t.name}`,
    lo: lo.toString(),
    hi: hi.toString(),
    sourceRows: a.rows,
    targetRows: b.rows,
    missingOnTarget: [],
    extraOnTarget: [],
    changed: [],
  };
  if (Math.max(a.rows, b.rows) <= ROW_LIMIT || depth > 12 || lo === hi) {
    const [ra, rb] = await Promise.all([
      rowsOf(source, t, ks, lo, hi),
      rowsOf(target, t, ks, lo, hi),
    ]);
    for (const [k, h] of ra) {
      const other = rb.get(k);
      if (other === undefined) m.missingOnTarget.push(k);
      else if (other !== h) m.changed.push(k);
    }
    for (const k of rb.keys()) if (!ra.has(k)) m.extraOnTarget.push(k);
    m.missingOnTarget = m.missingOnTarget.slice(0, MAX_KEYS);
    m.extraOnTarget = m.extraOnTarget.slice(0, MAX_KEYS);
    m.changed = m.changed.slice(0, MAX_KEYS);
    return m;
  }
  for (const part of chunks(lo, hi, 8)) {
    const [pa, pb] = await Promise.all([
      digest(source, t, ks, part.lo, part.hi),
      digest(target, t, ks, part.lo, part.hi),
    ]);
    if (same(pa, pb)) continue;
    const sub = await bisect(source, target, t, ks, part.lo, part.hi, pa, pb, depth + 1);
    m.missingOnTarget.push(...sub.missingOnTarget);
    m.extraOnTarget.push(...sub.extraOnTarget);
    m.changed.push(...sub.changed);
    if (m.missingOnTarget.length + m.extraOnTarget.length + m.changed.length >= MAX_KEYS) break;
  }
  return m;
}
