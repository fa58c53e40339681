// Rows of one hash range of one table: counted, and deleted in batches at a pace (the old
// owner's copy after a move, stale rows on a target before one). Deleting by ctid in batches
// keeps each transaction short, so neither replication nor vacuum is held back for long.
import { keyHashSql } from '@tessera/keyspace';
import type pg from 'pg';
import type { KeyspaceInfo, ShardedTable } from '../move/catalog-view.js';
import { ident, qualified } from '../nodes/sessions.js';

function where(t: ShardedTable, ks: KeyspaceInfo): string {
  return `${keyHashSql(ident(t.keyColumn), ks.keyType, ks.seed)} between $1::int8 and $2::int8`;
}

export async function tableExists(c: pg.ClientBase, t: ShardedTable): Promise<boolean> {
  const r = await c.query<{ oid: number | null }>('select to_regclass($1)::oid as oid', [
    qualified(t.schema, t.name),
  ]);
  return r.rows[0]?.oid != null;
}

export async function countRange(
  c: pg.ClientBase,
  t: ShardedTable,
  ks: KeyspaceInfo,
  lo: bigint,
  hi: bigint,
): Promise<number> {
  if (!(await tableExists(c, t))) return 0;
  const { rows } = await c.query<{ n: string }>(
    `select count(*)::text as n from ${qualified(t.schema, t.name)} where ${where(t, ks)}`,
    [lo.toString(), hi.toString()],
  );
  return Number(rows[0]!.n);
}

export interface DeletePace {
  batchRows: number;
  /** 0 = as fast as it goes. */
  rowsPerSec: number;
  /** Called after each batch; throws to stop (a cancel, a lost lease). */
  onBatch?: (deleted: number) => void | Promise<void>;
}

/** Deletes every row of [lo, hi] from the table; resolves with how many it deleted. */
export async function deleteRange(
  c: pg.ClientBase,
  t: ShardedTable,
  ks: KeyspaceInfo,
  lo: bigint,
  hi: bigint,
  pace: DeletePace,
): Promise<number> {
  if (!(await tableExists(c, t))) return 0;
  const name = qualified(t.schema, t.name);
  let total = 0;
  const start = performance.now();
  for (;;) {
    const res = await c.query(
      `delete from ${name} where ctid = any(array(select ctid from ${name} where ${where(t, ks)} limit ${pace.batchRows}))`,
      [lo.toString(), hi.toString()],
    );
    const n = res.rowCount ?? 0;
    total += n;
    await pace.onBatch?.(n);
    if (n === 0) break;
    if (pace.rowsPerSec > 0) {
      const due = (total / pace.rowsPerSec) * 1000 - (performance.now() - start);
      if (due > 0) await new Promise((r) => setTimeout(r, due));
    }
  }
  return total;
}
