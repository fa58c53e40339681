// The statement path's side of cluster-wide sequences: before an INSERT into a sharded or
// reference table is admitted, the values its nodes would have made from their own sequences
// (and a uuid key's gen_random_uuid()) are made here, from the router's blocks, and written into
// the statement, so the row goes to the node its key hashes to and every value is unique across
// the cluster. Synchronous while the blocks and the table's columns are at hand; a promise only
// when a block or a table's definition must be fetched.
import { randomUUID } from 'node:crypto';
import type { Analysis, InsertAnalysis, SelectAnalysis } from '@tessera/sql';
import type { Snapshot, TableView } from '@tessera/keyspace';
import { insertLayout } from '@tessera/sql';
import { acquireFor, poolFor } from '../execute/backends.js';
import { lookupTable, qualified } from '../routing/tables.js';
import type { Session } from '../session/session.js';
import type { SequenceDef } from './blocks.js';
import type { Sequences } from './sequences.js';
import { TABLE_SEQUENCES_SQL, tableInfoOf, type TableInfo } from './columns.js';
import {
  NAMED_SEQUENCE_SQL,
  fillCalls,
  mayCallSequence,
  namedSequenceOf,
  type Draw,
  type Lookup,
} from './calls.js';
import { applyFill, literalOf, planFill, type FillPlan } from './fill.js';
import { queryText } from '../pool/query-text.js';
import { noteValue } from './session-values.js';

export interface Filled {
  readonly sql: string;
  readonly analysis: Analysis;
}

const TABLE_QUERY_TIMEOUT_MS = 10_000;

/**
 * Whether fillDefaults may have work for `a`: an INSERT, or a SELECT that may call a sequence
 * function (those are volatile: most SELECTs are answered without looking at their text).
 */
export function mayFill(a: Analysis): a is InsertAnalysis | SelectAnalysis {
  return (
    a.kind === 'insert' || (a.kind === 'select' && a.hasVolatileFunctions && mayCallSequence(a.sql))
  );
}

/**
 * The INSERT with the router's values written in, or undefined when it runs as sent. DDL through
 * the router forgets the tables' definitions (they may have changed). Asked for every INSERT's
 * Bind: nothing is built for a table whose definition is at hand and needs no router values.
 */
export function fillDefaults(
  s: Session,
  a: Analysis,
  /** The Bind's parameters as text (extended protocol): `nextval($1)`. */
  param?: (index: number) => string | null | undefined,
): Filled | undefined | Promise<Filled | undefined> {
  const seqs = s.services.sequences;
  if (seqs === undefined) return undefined;
  if (a.kind === 'ddl') {
    forgetDefinitions(seqs);
    return undefined;
  }
  if (!mayFill(a)) return undefined;
  const snapshot = s.services.catalog();
  if (snapshot === undefined) return undefined;
  if (a.kind === 'select') return selectCalls(s, seqs, a, snapshot, param);
  const ref = a.tables[a.targetIndex];
  if (ref === undefined) return undefined;
  const view = lookupTable(snapshot, ref.schema, ref.name);
  if (view.kind !== 'sharded' && view.kind !== 'reference') return undefined;
  const key = tableKey(s.database, view);
  const info = seqs.tables.get(snapshot.epoch, key);
  if (info !== undefined) return fillFor(s, seqs, a, view, info);
  const go = (info: TableInfo | undefined): Filled | undefined | Promise<Filled | undefined> =>
    info === undefined ? undefined : fillFor(s, seqs, a, view, info);
  const load = seqs.tables.load(snapshot.epoch, key, async () => {
    const rows = await onSomeNode(s, TABLE_SEQUENCES_SQL, [
      `${quote(view.schema)}.${quote(view.name)}`,
    ]);
    return tableInfoOf(s.database, rows);
  });
  return load.then(go, (e: unknown) => {
    // A table this session cannot see from another connection (created in its open
    // transaction) runs as sent; anything else is the client's error to see.
    if (typeof e === 'object' && e !== null && (e as { sqlstate?: string }).sqlstate === '42P01')
      return undefined;
    throw e;
  });
}

/** The INSERT `a` into `view` (defined by `info`) with the router's values, or undefined. */
function fillFor(
  s: Session,
  seqs: Sequences,
  a: InsertAnalysis,
  view: Extract<TableView, { kind: 'sharded' | 'reference' }>,
  info: TableInfo,
): Filled | undefined | Promise<Filled | undefined> {
  const keyColumn = view.kind === 'sharded' ? view.keyColumn : undefined;
  if (!info.routerDefaults && (a.columns !== undefined || keyColumn === undefined))
    return undefined;
  const layout = a.source === 'values' ? insertLayout(a.sql) : undefined;
  const plan = planFill(a, layout, info, { name: qualified(view), keyColumn });
  if (plan === undefined) return undefined;
  return fillWith(s, seqs, a, plan);
}

/** A table's key in the definitions cache: one string per (table view, database), hashed once. */
const tableKeys = new WeakMap<object, { database: string; key: string }>();
function tableKey(
  database: string,
  view: { readonly schema: string; readonly name: string },
): string {
  const hit = tableKeys.get(view);
  if (hit !== undefined && hit.database === database) return hit.key;
  const key = `${database}\0${view.schema}.${view.name}`;
  tableKeys.set(view, { database, key });
  return key;
}

/** The values of `plan` drawn, noted for currval/lastval, and written into the statement. */
function fillWith(
  s: Session,
  seqs: Sequences,
  a: InsertAnalysis,
  plan: FillPlan,
): Filled | Promise<Filled> {
  // One draw per sequence, for all of its slots, in slot order.
  const wanted = new Map<string, { def: SequenceDef; slots: number[] }>();
  plan.slots.forEach((src, i) => {
    if (src.kind !== 'seq') return;
    let w = wanted.get(src.seq.key);
    if (w === undefined) wanted.set(src.seq.key, (w = { def: src.seq, slots: [] }));
    w.slots.push(i);
  });
  const values = new Array<string>(plan.slots.length);
  plan.slots.forEach((src, i) => {
    if (src.kind === 'uuid') values[i] = literalOf(randomUUID());
  });
  const pending: Promise<void>[] = [];
  for (const w of wanted.values()) {
    const put = (got: bigint[]): void => {
      w.slots.forEach((slot, k) => (values[slot] = literalOf(got[k]!)));
      noteValue(s, w.def, got[got.length - 1]!);
    };
    const got = seqs.blocks.take(w.def, w.slots.length);
    if (Array.isArray(got)) put(got);
    else pending.push(got.then(put));
  }
  const finish = (): Filled => {
    const sql = applyFill(a.sql, plan, values);
    const analyses = s.services.cache.get(sql);
    if (analyses.length !== 1 || analyses[0]!.kind !== 'insert')
      throw new Error(`a filled INSERT did not analyse as one INSERT: ${sql}`);
    return { sql, analysis: analyses[0]! };
  };
  return pending.length === 0 ? finish() : Promise.all(pending).then(finish);
}

/**
 * A catalog query on a node this session holds no backend of and that is not failing over (a
 * statement for it is held: its definitions must not be asked of it first), else home.
 */
async function onSomeNode(
  s: Session,
  sql: string,
  params: readonly string[],
): Promise<(string | null)[][]> {
  const snapshot = s.epoch().snapshot;
  const node =
    snapshot.nodes.find((n) => !s.held.has(n) && !snapshot.failingOver.has(n)) ?? snapshot.home;
  const pool = poolFor(s, snapshot, node);
  const backend = await acquireFor(s, pool);
  try {
    return await queryText(backend, sql, params, TABLE_QUERY_TIMEOUT_MS);
  } finally {
    pool.release(backend);
  }
}

function quote(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * A Query's statements with the router's values written in (one text again when there are
 * several); undefined when none changed.
 */
export function filledText(
  s: Session,
  analyses: readonly Analysis[],
):
  | { sql: string; analyses: readonly Analysis[] }
  | undefined
  | Promise<{ sql: string; analyses: readonly Analysis[] } | undefined> {
  if (s.services.sequences === undefined) return undefined;
  const parts = analyses.map((a) => fillDefaults(s, a));
  const build = (
    fs: readonly (Filled | undefined)[],
  ): { sql: string; analyses: readonly Analysis[] } | undefined => {
    if (fs.every((f) => f === undefined)) return undefined;
    if (analyses.length === 1) return { sql: fs[0]!.sql, analyses: [fs[0]!.analysis] };
    const sql = analyses.map((a, i) => fs[i]?.sql ?? a.sql).join(';\n');
    const again = s.services.cache.get(sql);
    if (again.length !== analyses.length)
      throw new Error(
        `a filled multi-statement text did not analyse as ${analyses.length} statements`,
      );
    return { sql, analyses: again };
  };
  if (parts.some((p) => p instanceof Promise)) return Promise.all(parts).then(build);
  return build(parts as (Filled | undefined)[]);
}

/** DDL through the router ran: tables' definitions are read again when next needed. */
export function forgetAfterDdl(s: Session, analyses: readonly Analysis[]): void {
  const seqs = s.services.sequences;
  if (seqs !== undefined && analyses.some((a) => a.kind === 'ddl')) forgetDefinitions(seqs);
}

/** DDL through the router: tables and sequences are read again when next needed. */
export function forgetDefinitions(seqs: Sequences): void {
  seqs.tables.forget();
  seqs.named.forget();
}

/** `select nextval('s')` and the like, for the router's sequences (calls.ts). */
function selectCalls(
  s: Session,
  seqs: Sequences,
  a: Analysis,
  snapshot: Snapshot,
  param: ((index: number) => string | null | undefined) | undefined,
): Filled | undefined | Promise<Filled | undefined> {
  const lookup: Lookup = (written) => {
    const key = `${s.database}\0${written}`;
    const hit = seqs.named.get(snapshot.epoch, key);
    if (hit !== undefined) return hit;
    return seqs.named.load(snapshot.epoch, key, () =>
      onSomeNode(s, NAMED_SEQUENCE_SQL, [written]).then(
        (rows) => namedSequenceOf(s.database, rows, snapshot),
        // No such sequence (or no right to it): the node says so when the statement runs.
        () => null,
      ),
    );
  };
  const draw: Draw = (def) => {
    const got = seqs.blocks.take(def, 1);
    return Array.isArray(got) ? got[0]! : got.then((v) => v[0]!);
  };
  const text = fillCalls(s, a, lookup, draw, param);
  const done = (sql: string | undefined): Filled | undefined => {
    if (sql === undefined) return undefined;
    const analyses = s.services.cache.get(sql);
    if (analyses.length !== 1) throw new Error(`a filled SELECT did not analyse as one: ${sql}`);
    return { sql, analysis: analyses[0]! };
  };
  return text instanceof Promise ? text.then(done) : done(text);
}
