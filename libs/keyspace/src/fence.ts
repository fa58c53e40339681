// The tessera_owns CHECK constraint (DESIGN.md "Fences"): SQL that is true exactly for rows
// whose key hashes into the ranges a node owns, so no one can put a row where it does not belong.
import { hashFunctionName, type KeyTypeName } from './key-type.js';
import type { HashRange } from './hash-space.js';
import { sortedByLo } from './validate-ranges.js';

/** `ranges` ordered, with touching or overlapping ones joined, so a fence tests as few as possible. */
export function mergeRanges(ranges: readonly HashRange[]): { lo: bigint; hi: bigint }[] {
  const out: { lo: bigint; hi: bigint }[] = [];
  for (const r of sortedByLo(ranges)) {
    if (r.lo > r.hi) throw new RangeError(`range [${r.lo}, ${r.hi}] has lo above hi`);
    const last = out[out.length - 1];
    if (last !== undefined && r.lo <= last.hi + 1n) {
      if (r.hi > last.hi) last.hi = r.hi;
    } else {
      out.push({ lo: r.lo, hi: r.hi });
    }
  }
  return out;
}

/** An int8 literal; quoted, because -9223372036854775808::int8 would cast before negating. */
function int8(v: bigint): string {
  return `'${v}'::int8`;
}

/**
 * The boolean expression for a node's fence on a table: the key's hash lies in one of `ranges`.
 * `keyColumnSql` is the key column as SQL (already quoted as needed). A node owning nothing
 * gets `false`. Text keys hash under COLLATE "C" so the fence hashes the bytes, as routing does,
 * whatever the column's collation.
 */
export function fenceCheckSql(
  keyColumnSql: string,
  keyType: KeyTypeName,
  seed: bigint,
  ranges: readonly HashRange[],
): string {
  return rangesTestSql(keyHashSql(keyColumnSql, keyType, seed), ranges);
}

/**
 * The key's hash as SQL, exactly as routing computes it: `hash<type>extended(key, seed)`, text
 * under COLLATE "C" (the bytes, whatever the column's collation).
 */
export function keyHashSql(keyColumnSql: string, keyType: KeyTypeName, seed: bigint): string {
  const column = keyType === 'text' ? `${keyColumnSql} COLLATE "C"` : keyColumnSql;
  return `${hashFunctionName(keyType)}(${column}, ${int8(seed)})`;
}

/** `hash BETWEEN lo AND hi` for each merged range, ORed; `false` for none. */
function rangesTestSql(hashSql: string, ranges: readonly HashRange[]): string {
  const merged = mergeRanges(ranges);
  if (merged.length === 0) return 'false';
  const tests = merged.map((r) => `${hashSql} BETWEEN ${int8(r.lo)} AND ${int8(r.hi)}`);
  return tests.length === 1 ? tests[0]! : `(${tests.join(' OR ')})`;
}

// --- The function-based fence (docs/architecture.md, "Fences") ---
//
// A node's fence on every table of a keyspace is `CHECK (tessera.owns_<keyspace>(hash)) NOT VALID`,
// where the function is an IMMUTABLE SQL function listing the ranges the node owns. Moving a range
// changes the fence with CREATE OR REPLACE FUNCTION, which takes no lock on any table (an ALTER
// TABLE ... ADD CONSTRAINT takes ACCESS EXCLUSIVE and stalls the whole table). Declaring a
// function immutable whose body changes is harmless here: the planner does not use NOT VALID
// constraints, and each statement reads the body current when it starts.

/** FNV-1a 64 over UTF-8: a stable short tag for names that are not plain identifiers. */
function fnv64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

/**
 * The fence function of a keyspace, schema-qualified: `tessera.owns_<keyspace>` when the name is
 * a plain lower-case identifier short enough, else `tessera.owns_<16 hex digits of its hash>`.
 */
export function ownsFunctionName(keyspace: string): string {
  const plain = /^[a-z_][a-z0-9_]*$/.test(keyspace) && keyspace.length <= 48;
  return `tessera.owns_${plain ? keyspace : `x${fnv64(keyspace)}`}`;
}

/** Creates or replaces the fence function of `keyspace` so it is true exactly on `ranges`. */
export function ownsFunctionSql(keyspace: string, ranges: readonly HashRange[]): string {
  return (
    `CREATE OR REPLACE FUNCTION ${ownsFunctionName(keyspace)}(h int8) RETURNS boolean ` +
    `LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $tessera_owns$ SELECT ${rangesTestSql('h', ranges)} $tessera_owns$`
  );
}

/** The CHECK expression of the function-based fence on a table of `keyspace`. */
export function functionFenceCheckSql(
  keyColumnSql: string,
  keyType: KeyTypeName,
  seed: bigint,
  keyspace: string,
): string {
  return `${ownsFunctionName(keyspace)}(${keyHashSql(keyColumnSql, keyType, seed)})`;
}

/** Whether a constraint definition (pg_get_constraintdef) is the function-based fence of `keyspace`. */
export function isFunctionFence(constraintDef: string, keyspace: string): boolean {
  const fn = ownsFunctionName(keyspace);
  return (
    constraintDef.includes(`${fn}(`) || constraintDef.includes(`${fn.replace('tessera.', '')}(`)
  );
}

/**
 * The publication row filter of a move: the key's hash in [lo, hi], with built-in functions only
 * (Postgres refuses a user-defined function in a row filter; COLLATE "C" it accepts).
 */
export function rowFilterSql(
  keyColumnSql: string,
  keyType: KeyTypeName,
  seed: bigint,
  range: HashRange,
): string {
  return rangesTestSql(keyHashSql(keyColumnSql, keyType, seed), [range]);
}

/**
 * One idempotent statement that gives a table of `keyspace` the function-based fence: creates
 * schema `tessera` and the fence function (with `ranges`) only when the function is missing (a
 * mover may own it: never overwrite), then adds the constraint only when the table has none. For
 * the router's CREATE TABLE path.
 */
export function functionFenceStatementSql(
  tableSql: string,
  keyColumnSql: string,
  keyType: KeyTypeName,
  seed: bigint,
  keyspace: string,
  ranges: readonly HashRange[],
): string {
  const fn = ownsFunctionName(keyspace);
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const create = ownsFunctionSql(keyspace, ranges);
  return (
    `DO $tessera_fence$ BEGIN ` +
    `IF to_regprocedure(${literal(`${fn}(int8)`)}) IS NULL THEN ` +
    `CREATE SCHEMA IF NOT EXISTS tessera; EXECUTE ${literal(create)}; END IF; ` +
    `IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = ${literal(tableSql)}::regclass AND conname = 'tessera_owns') ` +
    `THEN ALTER TABLE ${tableSql} ADD CONSTRAINT tessera_owns CHECK (${functionFenceCheckSql(keyColumnSql, keyType, seed, keyspace)}) NOT VALID; END IF; ` +
    `END $tessera_fence$`
  );
}
