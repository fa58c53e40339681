// Fences on a node (docs/architecture.md, "Fences"): the keyspace's fence function written with
// CREATE OR REPLACE FUNCTION (no table lock), and every table of the keyspace given the
// function-based CHECK. A table that still has the older CHECK with the ranges spelled out (what
// CREATE TABLE through the router adds) is converted once, with ALTER TABLE under a short
// lock_timeout retried, so the stall it may cause on that table is bounded and happens outside
// any cutover.
import {
  functionFenceCheckSql,
  isFunctionFence,
  ownsFunctionSql,
  type HashRange,
} from '@tessera/keyspace';
import type pg from 'pg';
import type { KeyspaceInfo, ShardedTable } from '../move/catalog-view.js';
import { ident, literal, qualified } from '../nodes/sessions.js';

const CONVERT_LOCK_TIMEOUT_MS = 100;
const CONVERT_ATTEMPTS = 50;

/**
 * Replaces the fence function only (the cutover's swap): one catalog write, no table lock.
 * Resolves with the server's clock right after it committed (one round trip for both). The
 * explicit COMMIT matters: statements of one Query run in one implicit transaction, so without it
 * the clock is read before the commit, and a writer whose transaction began in between passed
 * the old fence yet looks younger than the swap to waitForWriters. Never call it inside BEGIN.
 */
export async function swapFence(
  c: pg.ClientBase,
  keyspace: string,
  ranges: readonly HashRange[],
): Promise<string> {
  const results = (await c.query(
    `${ownsFunctionSql(keyspace, ranges)}; commit; select clock_timestamp()::text as t`,
  )) as unknown as { rows: { t?: string }[] }[];
  return results[results.length - 1]!.rows[0]!.t!;
}

export interface FenceResult {
  /** Tables whose fence was added or converted to the function-based one. */
  converted: string[];
}

/** The function (with `ranges`) and the function-based CHECK on every table of `tables` present. */
export async function writeFence(
  c: pg.ClientBase,
  ks: KeyspaceInfo,
  ranges: readonly HashRange[],
  tables: readonly ShardedTable[],
): Promise<FenceResult> {
  await c.query('create schema if not exists tessera');
  await swapFence(c, ks.name, ranges);
  const converted: string[] = [];
  for (const t of tables) {
    const name = qualified(t.schema, t.name);
    const { rows } = await c.query<{ oid: number | null; def: string | null }>(
      `select to_regclass($1)::oid as oid,
              (select pg_get_constraintdef(k.oid) from pg_constraint k
                where k.conrelid = to_regclass($1) and k.conname = 'tessera_owns') as def`,
      [name],
    );
    const row = rows[0];
    if (!row || row.oid === null) continue;
    if (row.def !== null && isFunctionFence(row.def, ks.name)) continue;
    const check = functionFenceCheckSql(ident(t.keyColumn), ks.keyType, ks.seed, ks.name);
    const alter =
      row.def === null
        ? `alter table ${name} add constraint tessera_owns check (${check}) not valid`
        : `alter table ${name} drop constraint tessera_owns, add constraint tessera_owns check (${check}) not valid`;
    await withShortLocks(c, alter);
    converted.push(`${t.schema}.${t.name}`);
  }
  return { converted };
}

/** Runs `sql` under a short lock_timeout, retrying while it cannot get its lock. */
async function withShortLocks(c: pg.ClientBase, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await c.query('begin');
    try {
      await c.query(`set local lock_timeout = ${literal(`${CONVERT_LOCK_TIMEOUT_MS}ms`)}`);
      await c.query(sql);
      await c.query('commit');
      return;
    } catch (e) {
      await c.query('rollback').catch(() => undefined);
      if ((e as { code?: string }).code !== '55P03' || attempt >= CONVERT_ATTEMPTS) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}
