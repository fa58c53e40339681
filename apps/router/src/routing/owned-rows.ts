// Reads and writes that reach a node which may hold rows it does not own (docs/architecture.md,
// "Reads during moves"): while a range of a keyspace moves, its rows are on the source and,
// copied, on the target before the flip, and left on the source after it until the delete.
// A statement sent to several nodes then reads, on each, only the ranges that node owns by the
// statement's catalog snapshot. No move in the catalog: the statement is sent as it came.
import { fenceCheckSql, type Snapshot } from '@tessera/keyspace';
import { quoteIdent, restrictTables } from '@tessera/sql';
import { lookupTable } from './tables.js';

/** Rewritten statements kept per snapshot (and search_path: namedSnapshot gives each its own). */
const MAX_KEPT = 500;
const kept = new WeakMap<Snapshot, Map<string, string>>();

/**
 * `sql` restricted to the rows `node` owns, for every sharded table of a keyspace with a move in
 * progress; `sql` itself when it names none. `catalog` is the session's named snapshot (names.ts)
 * so unqualified names resolve by its search_path. Throws 0A000 when it cannot be restricted.
 */
export function ownedRowsOnly(catalog: Snapshot, node: string, sql: string): string {
  if (catalog.moves.size === 0) return sql;
  let memo = kept.get(catalog);
  if (memo === undefined) kept.set(catalog, (memo = new Map()));
  const key = `${node}\0${sql}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const owned = catalog.ownedRanges(node);
  const out = restrictTables(sql, (schema, name) => {
    const view = lookupTable(catalog, schema, name);
    if (view.kind !== 'sharded' || !catalog.moves.has(view.keyspace.name)) return undefined;
    const ks = view.keyspace;
    const ranges = owned.get(ks.name) ?? [];
    const column = quoteIdent(view.keyColumn);
    return (q) =>
      fenceCheckSql(q === undefined ? column : `${q}.${column}`, ks.keyType, ks.seed, ranges);
  });
  if (memo.size >= MAX_KEPT) memo.delete(memo.keys().next().value!);
  memo.set(key, out);
  return out;
}
