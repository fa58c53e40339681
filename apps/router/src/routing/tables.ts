// Sorting a statement's table references by what the catalog says they are, the first step of
// every routing decision.
import type { TableRef } from '@tessera/sql';
import type { Snapshot, TableView } from '@tessera/keyspace';
import { namesOf, resolveUnqualified, type ViewFact } from './names.js';

export type ShardedView = TableView & { kind: 'sharded' };

export interface ResolvedRef {
  readonly index: number;
  readonly ref: TableRef;
  readonly view: TableView;
}

export interface ClassifiedTables {
  readonly sharded: readonly (ResolvedRef & { view: ShardedView })[];
  readonly reference: readonly ResolvedRef[];
  readonly global: readonly ResolvedRef[];
  /** Some reference is written (INSERT/UPDATE/DELETE target, data-modifying CTE, DDL target). */
  readonly writes: readonly ResolvedRef[];
}

/**
 * The table a reference means: a qualified one as written, an unqualified one by the search_path
 * the snapshot carries (names.ts: namedSnapshot); throws 0A000 when that cannot be known.
 */
export function lookupTable(
  catalog: Snapshot,
  schema: string | undefined,
  name: string,
): TableView {
  const t =
    schema === undefined
      ? resolveUnqualified(catalog, namesOf(catalog), name)
      : (catalog.table(schema, name) ?? { kind: 'global', schema, name });
  if (t.kind !== 'global') return t;
  // A view over reference tables only is on every node and reads alike everywhere: one more.
  const view = namesOf(catalog).home.views.get(`${t.schema}.${t.name}`);
  return view !== undefined && !view.sharded
    ? { kind: 'reference', schema: t.schema, name: t.name }
    : t;
}

/** The view over sharded tables a reference means (read as its query: session/views.ts), if any. */
export function shardedViewOf(
  catalog: Snapshot,
  schema: string | undefined,
  name: string,
): ViewFact | undefined {
  const views = namesOf(catalog).home.views;
  if (views.size === 0) return undefined;
  const t = lookupTable(catalog, schema, name);
  if (t.kind !== 'global') return undefined;
  const view = views.get(`${t.schema}.${t.name}`);
  return view?.sharded === true ? view : undefined;
}

// Per table list (analyses are cached by statement text, so a prepared statement's list is one
// object) and catalog snapshot (one per search_path: names.ts): a statement run again is not
// classified again.
const classified = new WeakMap<
  readonly TableRef[],
  { catalog: Snapshot; tables: ClassifiedTables }
>();

/** The statement's table references sorted by kind; the result must not be changed. */
export function classify(refs: readonly TableRef[], catalog: Snapshot): ClassifiedTables {
  const hit = classified.get(refs);
  if (hit !== undefined && hit.catalog === catalog) return hit.tables;
  const tables = classifyNow(refs, catalog);
  classified.set(refs, { catalog, tables });
  return tables;
}

function classifyNow(refs: readonly TableRef[], catalog: Snapshot): ClassifiedTables {
  const sharded: (ResolvedRef & { view: ShardedView })[] = [];
  const reference: ResolvedRef[] = [];
  const global: ResolvedRef[] = [];
  const writes: ResolvedRef[] = [];
  refs.forEach((ref, index) => {
    const view = lookupTable(catalog, ref.schema, ref.name);
    const r: ResolvedRef = { index, ref, view };
    if (view.kind === 'sharded') sharded.push({ ...r, view });
    else if (view.kind === 'reference') reference.push(r);
    else global.push(r);
    if (ref.role === 'target') writes.push(r);
  });
  return { sharded, reference, global, writes };
}

export function qualified(v: TableView): string {
  return `${v.schema}.${v.name}`;
}
