// The router's catalog snapshot seen through the multi-node planner's seam (PlannerCatalog of
// @tessera/sql): table kinds, key columns and keyspaces, plus whether text orders bytewise.
import type { PlannerCatalog, PlannerTable } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { lookupTable } from './tables.js';

/** Collations under which text compares by its bytes, as the executor's merges compare it. */
const BYTEWISE_COLLATIONS = new Set(['c', 'posix', 'c.utf-8', 'c.utf8', 'ucs_basic']);

/** Whether a database collation (pg_database.datcollate, libc provider) orders text bytewise. */
export function isBytewiseCollation(datcollate: string, provider: string): boolean {
  return provider === 'c' && BYTEWISE_COLLATIONS.has(datcollate.toLowerCase());
}

/**
 * One snapshot, one collation answer. Unqualified names resolve to `public`, and undeclared tables
 * are global, exactly as routing resolves them (routing/tables.ts).
 */
export function plannerCatalog(
  catalog: Snapshot,
  textCollationIsBytewise: boolean,
): PlannerCatalog {
  return {
    textCollationIsBytewise,
    table(schema: string | undefined, name: string): PlannerTable {
      const view = lookupTable(catalog, schema, name);
      if (view.kind === 'sharded')
        return { kind: 'sharded', keyColumn: view.keyColumn, keyspace: view.keyspace.name };
      return { kind: view.kind };
    },
  };
}
