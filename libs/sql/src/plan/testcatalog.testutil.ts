// A small catalog for planner tests: sharded t, u (keyspace ks, key id), o (keyspace other),
// reference r, global g.
import type { PlannerCatalog, PlannerTable } from './types.js';

const TABLES: Record<string, PlannerTable> = {
  t: { kind: 'sharded', keyColumn: 'id', keyspace: 'ks' },
  u: { kind: 'sharded', keyColumn: 'id', keyspace: 'ks' },
  o: { kind: 'sharded', keyColumn: 'id', keyspace: 'other' },
  r: { kind: 'reference' },
  g: { kind: 'global' },
};

export function testCatalog(textCollationIsBytewise = true): PlannerCatalog {
  return {
    textCollationIsBytewise,
    table: (schema, name) =>
      schema === undefined || schema === 'public' ? TABLES[name] : undefined,
  };
}
