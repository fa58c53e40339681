// INSERT ... SELECT into a sharded table whose rows may go to several nodes (libs/sql
// planInsertSelect decides how): colocated with the target (key to key in one keyspace, or
// reference tables), the statement runs as it is on every owner; otherwise the SELECT is read
// through the router (from the one node that has its rows, or across nodes a chunk at a time,
// scatter/cursor.ts) and its rows are inserted by owner, bound with the types the SELECT returned
// them as (the same assignment casts as Postgres). All of it in one transaction: the client's,
// or an implicit one (two-phase when several wrote).
import {
  BackendCode,
  FrameReader,
  NO_DATA,
  Writer,
  decodeDataRow,
  decodeRowDescription,
  writeCommandComplete,
} from '@tessera/pg-wire';
import type { Snapshot } from '@tessera/keyspace';
import {
  insertValuesSql,
  planInsertSelect,
  quoteQualified,
  type Analysis,
  type InsertAnalysis,
  type InsertSelectPlan,
} from '@tessera/sql';
import { RouterError, unsupported } from '../errors.js';
import { hashPinValues, type ParamSource } from '../routing/key-hash.js';
import { namedSnapshot } from '../routing/names.js';
import { ownedRowsOnly } from '../routing/owned-rows.js';
import { plannerCatalog } from '../routing/planner-catalog.js';
import { route } from '../routing/route.js';
import type { InsertSelectRoute, ScatterRoute } from '../routing/route-types.js';
import { ScatterCursor } from '../scatter/cursor.js';
import { lookupTable, type ShardedView } from '../routing/tables.js';
import { sessionNames } from '../session/names.js';
import type { Session } from '../session/session.js';
import { NO_BIND } from '../statement/statement.js';
import { acquireFor, poolFor } from './backends.js';
import type { BoundValues } from './bound.js';
import { atomically } from './cross-node.js';
import { firstError, headOf, rowCounts, runParts, type Bound, type PartResult } from './fanout.js';
import { queryText } from '../pool/query-text.js';

/** Functions whose value is the transaction's or statement's clock: one per node if run per node. */
const CLOCK =
  /\b(now|current_timestamp|current_date|current_time|localtime|localtimestamp|transaction_timestamp|statement_timestamp)\b/i;

const TABLE_COLUMNS_SQL =
  'select attname::text from pg_catalog.pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum';

export async function runInsertSelect(
  s: Session,
  r: InsertSelectRoute,
  a: InsertAnalysis,
  snapshot: Snapshot,
  bound?: Bound,
): Promise<void> {
  const named = namedSnapshot(snapshot, sessionNames(s));
  const ref = a.tables[a.targetIndex]!;
  const target = lookupTable(named, ref.schema, ref.name);
  if (target.kind !== 'sharded') throw new Error('insert_select route into an unsharded table');
  const columns = a.columns ?? (await tableColumns(s, snapshot, target));
  const plan = planInsertSelect(a, plannerCatalog(named, false), columns);
  if (plan.kind === 'refuse') throw unsupported(plan.reason);
  if (a.hasReturning)
    throw unsupported(
      'INSERT ... SELECT ... RETURNING into a sharded table whose rows go to several nodes is not supported yet',
    );
  if (plan.kind === 'per_node') return perNode(s, r, a, snapshot, bound);
  return viaRouter(s, r, plan, target, snapshot, bound);
}

/** Colocated: the statement as it is on every owner, each inserting the rows it selects. */
async function perNode(
  s: Session,
  r: InsertSelectRoute,
  a: InsertAnalysis,
  snapshot: Snapshot,
  bound: Bound | undefined,
): Promise<void> {
  if (CLOCK.test(a.sql))
    throw unsupported(
      'INSERT ... SELECT run on every node cannot use now() or another clock function (each node would take its own); pass the time as a value',
    );
  const named = namedSnapshot(snapshot, sessionNames(s));
  let results: PartResult[] = [];
  await atomically(s, async () => {
    const parts = r.nodes.map((node, i) => ({
      node,
      sql: ownedRowsOnly(named, node, a.sql),
      bind: bound?.values,
      describe: i === 0 && bound?.describe === true,
    }));
    results = await runParts(s, parts, true, snapshot);
    return firstError(results);
  });
  for (const b of headOf(results[0]!)) s.out.push(b);
  const total = rowCounts(results, 'INSERT').reduce((x, y) => x + y, 0);
  s.out.push(writeCommandComplete(new Writer(32), `INSERT 0 ${total}`).flush());
}

/** Rows the SELECT returned: their type OIDs and text values. */
interface Selected {
  readonly types: readonly number[];
  readonly rows: readonly (readonly (Buffer | null)[])[];
}

/** Not colocated: the SELECT read from one node, its rows inserted by owner. */
async function viaRouter(
  s: Session,
  r: InsertSelectRoute,
  plan: InsertSelectPlan & { kind: 'via_router' },
  target: ShardedView,
  snapshot: Snapshot,
  bound: Bound | undefined,
): Promise<void> {
  const source = selectSource(s, r, plan.select, snapshot, bound?.values);
  const perChunk = Math.max(1, Math.min(1000, Math.floor(65535 / plan.columns.length)));
  let total = 0;
  /** Inserts `selected` by owner; the error it ended with, if any. */
  const insert = async (selected: Selected): Promise<Error | undefined> => {
    if (selected.types.length !== plan.columns.length)
      return new RouterError(
        '42601',
        selected.types.length > plan.columns.length
          ? 'INSERT has more expressions than target columns'
          : 'INSERT has more target columns than expressions',
      );
    // A bare string literal or NULL takes its column's type, as in Postgres (libs/sql untyped).
    const types = selected.types.map((t, i) => (plan.untyped.includes(i) ? 0 : t));
    const byNode = rowsByOwner({ types, rows: selected.rows }, plan.keyIndex, target);
    for (let at = 0; ; at += perChunk) {
      const parts = [...byNode]
        .filter(([, rows]) => rows.length > at)
        .map(([n, rows]) => insertPart(n, target, plan.columns, types, rows, at, perChunk));
      if (parts.length === 0) return undefined;
      const results = await runParts(s, parts, true, snapshot);
      const failed = firstError(results);
      if (failed !== undefined) return failed;
      total += rowCounts(results, 'INSERT').reduce((x, y) => x + y, 0);
    }
  };
  await atomically(s, async () => {
    if (source.kind === 'scatter')
      return chunksAcross(s, source, snapshot, bound, perChunk, insert);
    const read = await runParts(s, [readPart(source.node, plan.select, bound)], false, snapshot);
    return firstError(read) ?? insert(selectedRows(read[0]!));
  });
  if (bound?.describe === true) s.out.push(NO_DATA);
  s.out.push(writeCommandComplete(new Writer(32), `INSERT 0 ${total}`).flush());
}

/** Where the SELECT's rows are: one node, or several (read across nodes by the router). */
type Source =
  | { readonly kind: 'node'; readonly node: string }
  | { readonly kind: 'scatter'; readonly route: ScatterRoute; readonly analysis: Analysis };

function selectSource(
  s: Session,
  r: InsertSelectRoute,
  select: string,
  snapshot: Snapshot,
  values: BoundValues | undefined,
): Source {
  const analyses = s.services.cache.get(select);
  const a = analyses.length === 1 ? analyses[0] : undefined;
  const named = namedSnapshot(snapshot, sessionNames(s));
  const params: ParamSource =
    values === undefined
      ? NO_BIND
      : (i) =>
          i < values.values.length
            ? { value: values.values[i]!, format: values.formats[i]!, type: values.types[i] ?? 0 }
            : undefined;
  const to = a === undefined ? undefined : route(a, named, params);
  if (to?.kind === 'scatter') return { kind: 'scatter', route: to, analysis: a! };
  if (to?.kind !== 'node')
    throw unsupported(
      'INSERT ... SELECT into a sharded table: the router cannot read its SELECT (it would run it on several nodes as a write); insert the rows another way',
    );
  // One any node answers (reference tables, no table): a node the INSERT writes anyway.
  return { kind: 'node', node: to.flexible ? (s.txn.first ?? r.nodes[0] ?? to.node) : to.node };
}

/**
 * The SELECT read across nodes inside the INSERT's transaction, `perChunk` rows at a time, each
 * chunk handed to `insert` before the next is read; the error it ended with, if any.
 */
async function chunksAcross(
  s: Session,
  source: Source & { kind: 'scatter' },
  snapshot: Snapshot,
  bound: Bound | undefined,
  perChunk: number,
  insert: (selected: Selected) => Promise<Error | undefined>,
): Promise<Error | undefined> {
  const v = bound?.values;
  const bind =
    v === undefined
      ? undefined
      : {
          values: v.values,
          formats: v.formats,
          types: v.types,
          paramCount: source.analysis.paramCount,
          resultFormats: [],
        };
  const owner = {};
  const c = await ScatterCursor.open(s, source.route, {
    select: source.analysis,
    bind,
    snapshot,
    owner,
  });
  try {
    const types = c.fields.map((f) => f.typeOid);
    while (!c.finished) {
      const rows: (readonly (Buffer | null)[])[] = [];
      await c.fetch(perChunk, (values) => void rows.push(values));
      const failed = await insert({ types, rows });
      if (failed !== undefined) return failed;
    }
    return undefined;
  } finally {
    await c.close();
  }
}

/** The SELECT as a read in the transaction, text results, its RowDescription included. */
function readPart(node: string, select: string, bound: Bound | undefined) {
  if (bound === undefined) return { node, sql: select };
  return { node, sql: select, bind: { ...bound.values, resultFormats: [] }, describe: true };
}

function selectedRows(result: PartResult): Selected {
  let types: number[] = [];
  const rows: (Buffer | null)[][] = [];
  const reader = new FrameReader();
  for (const piece of result.output.pieces) reader.push(piece);
  for (let f = reader.next(); f; f = reader.next()) {
    if (f.code === BackendCode.RowDescription)
      types = decodeRowDescription(Buffer.from(f.body)).map((d) => d.typeOid);
    else if (f.code === BackendCode.DataRow) rows.push(decodeDataRow(Buffer.from(f.body)));
  }
  return { types, rows };
}

/** Rows by the node owning their key, as the key column's assignment cast makes it. */
function rowsByOwner(
  selected: Selected,
  keyIndex: number,
  target: ShardedView,
): Map<string, (readonly (Buffer | null)[])[]> {
  const ks = target.keyspace;
  const type = selected.types[keyIndex] ?? 0;
  const byNode = new Map<string, (readonly (Buffer | null)[])[]>();
  for (const row of selected.rows) {
    const value = row[keyIndex] ?? null;
    const hashes = hashPinValues(
      [{ kind: 'param', index: 0, isArray: false, typeName: undefined }],
      ks.keyType,
      ks.seed,
      () => ({ value, format: 0, type }),
      'assign',
    );
    if (hashes === 'params' || hashes === 'unpinnable')
      throw unsupported(
        `INSERT ... SELECT into sharded table ${target.schema}.${target.name} selects its key column "${target.keyColumn}" as a type the router cannot place by; cast it to the key's type`,
      );
    // A NULL key fails the key's NOT NULL on any node: a fixed one says so.
    const node = ks.ownerOf(hashes[0] ?? 0n);
    let list = byNode.get(node);
    if (list === undefined) byNode.set(node, (list = []));
    list.push(row);
  }
  return byNode;
}

function insertPart(
  node: string,
  target: ShardedView,
  columns: readonly string[],
  types: readonly number[],
  rows: readonly (readonly (Buffer | null)[])[],
  at: number,
  perChunk: number,
) {
  const chunk = rows.slice(at, at + perChunk);
  const bind: BoundValues = {
    types: chunk.flatMap(() => types),
    formats: [],
    values: chunk.flat(),
    resultFormats: [],
  };
  return {
    node,
    sql: insertValuesSql(target.schema, target.name, columns, chunk.length),
    bind,
    describe: false,
  };
}

/** The target's columns in order (an INSERT without a column list), asked of one of its owners. */
async function tableColumns(
  s: Session,
  snapshot: Snapshot,
  target: ShardedView,
): Promise<string[]> {
  const node = target.keyspace.owners[0] ?? snapshot.home;
  const pool = poolFor(s, snapshot, node);
  const backend = await acquireFor(s, pool);
  try {
    const rows = await queryText(
      backend,
      TABLE_COLUMNS_SQL,
      [quoteQualified(target.schema, target.name)],
      5000,
    );
    return rows.map((row) => row[0] ?? '');
  } finally {
    pool.release(backend);
  }
}
