// Statements that run on several nodes at once: DDL and maintenance on every node, writes to
// reference tables, multi-row INSERTs split by row owner, UPDATE and DELETE whose rows span nodes.
// Writes are atomic across nodes: they run in the client's transaction, or in an implicit one
// that commits (two-phase when several nodes wrote) or rolls back as a whole (txn.ts). Only what
// Postgres refuses to run in a transaction block (VACUUM, CREATE INDEX CONCURRENTLY, ...) still
// runs on its own on each node.
import {
  BackendCode,
  FrameReader,
  Writer,
  commandRowCount,
  decodeDataRow,
  frameBytes,
  writeDataRow,
  writeCommandComplete,
  writeQuery,
  type NoticeFields,
} from '@tessera/pg-wire';
import type { Snapshot } from '@tessera/keyspace';
import {
  rebuildInsert,
  rebuildInsertRenumbered,
  type Analysis,
  type InsertAnalysis,
} from '@tessera/sql';
import { MergeError, mergeReturning, type Row } from '@tessera/merge';
import { RouterError, SQLSTATE } from '../errors.js';
import type { AllRoute, MultiWriteRoute, SplitInsertRoute } from '../routing/route-types.js';
import { BackendError, type Backend } from '../pool/backend.js';
import { HeldOut } from '../session/client-out.js';
import type { Expectation } from './exchange.js';
import { engage, settle } from './backends.js';
import { run1 } from './run.js';
import type { Session } from '../session/session.js';
import { atomically } from './cross-node.js';
import { ownedRowsOnly } from '../routing/owned-rows.js';
import { namedSnapshot } from '../routing/names.js';
import { sessionNames } from '../session/names.js';
import { boundRun, subsetOf, type BoundValues } from './bound.js';

export interface Part {
  readonly node: string;
  readonly sql: string;
  /** Run after `sql` on the same node, in the same transaction (a fence). */
  readonly after?: string | undefined;
  /** The client's Bind (extended protocol): `sql` runs as an unnamed statement with these values. */
  readonly bind?: BoundValues | undefined;
  /** With `bind`: a Describe of the portal first (the client asked for one before the Execute). */
  readonly describe?: boolean;
}

/** A portal's Bind (extended protocol) and whether its Describe came just before its Execute. */
export interface Bound {
  readonly values: BoundValues;
  readonly describe: boolean;
}

export interface PartResult {
  readonly node: string;
  readonly tags: string[];
  readonly output: HeldOut;
  readonly error: NoticeFields | undefined;
}

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();

/** DDL Postgres will not run inside a transaction block: it stays one autocommit per node. */
const OUTSIDE_TRANSACTION: ReadonlySet<string> = new Set([
  'create_database',
  'drop_database',
  'create_tablespace',
  'drop_tablespace',
  'create_subscription',
  'alter_subscription',
  'drop_subscription',
  'reindex',
  'cluster',
]);

/** Whether the statement can run inside a transaction block (and so atomically across nodes). */
export function transactional(r: AllRoute, a: Analysis): boolean {
  if (r.why === 'maintenance') return false;
  if (a.kind !== 'ddl') return true;
  // CONCURRENTLY anywhere in the text: conservative, a false hit only keeps today's behaviour.
  return !OUTSIDE_TRANSACTION.has(a.command) && !/\bconcurrently\b/i.test(a.sql);
}

/**
 * Runs each part on its node concurrently: inside the session's transaction (each node joins
 * it) when one is open, else one autocommit statement per node. `write`: the parts count as
 * writes of their nodes. Resolves when every node answered; keeps every node's output.
 */
export async function runParts(
  s: Session,
  parts: readonly Part[],
  write: boolean,
  catalog: Snapshot,
): Promise<PartResult[]> {
  // Acquired in node order, so two sessions fanning out never wait on each other in a cycle.
  const nodes = [...new Set(parts.map((p) => p.node))].sort();
  const engaged = new Map<
    string,
    { backend: Backend; messages: Buffer[]; expect: Expectation[] }
  >();
  try {
    for (const node of nodes) {
      engaged.set(node, await engage(s, node, catalog));
      s.txn.wrote(node, write);
    }
  } catch (e) {
    // Nodes already engaged joined the transaction on paper: let them really begin it.
    await Promise.allSettled(
      [...engaged.values()]
        .filter((x) => x.messages.length > 0)
        .map((x) => run1(s, x.backend, x.messages, x.expect, false, new HeldOut(false))),
    );
    if (!s.inTransaction()) for (const node of engaged.keys()) settle(s, node);
    throw e;
  }
  const runs = await Promise.allSettled(
    parts.map(async (p) => {
      const e = engaged.get(p.node)!;
      const messages = [...e.messages];
      const expect: Expectation[] = [...e.expect];
      e.messages.length = 0;
      e.expect.length = 0;
      if (p.bind === undefined) {
        messages.push(q(p.sql));
        expect.push({ t: 'query', ready: false });
      } else {
        const run = boundRun(p.sql, p.bind, p.describe === true);
        messages.push(...run.messages);
        expect.push(...run.expect);
        e.backend.unnamedOwner = undefined;
      }
      if (p.after !== undefined) {
        messages.push(q(p.after));
        expect.push({ t: 'quiet' });
      }
      const output = new HeldOut(true);
      const r = await run1(s, e.backend, messages, expect, true, output);
      return { node: p.node, tags: r.tags, output, error: r.error ?? r.quietError };
    }),
  );
  if (!s.txn.inBlock) for (const node of engaged.keys()) settle(s, node);
  const results: PartResult[] = [];
  for (const r of runs) {
    if (r.status === 'rejected') throw r.reason;
    results.push(r.value);
  }
  return results;
}

export function firstError(results: readonly PartResult[]): Error | undefined {
  const e = results.find((r) => r.error !== undefined)?.error;
  return e === undefined ? undefined : new BackendError(e);
}

/** The row count of each node's last CommandComplete. */
export function rowCounts(results: readonly PartResult[], verb: string): number[] {
  return results.map((res) => {
    const tag = res.tags[res.tags.length - 1];
    const n = tag === undefined ? undefined : commandRowCount(tag);
    if (n === undefined)
      throw new RouterError(
        SQLSTATE.internalError,
        `node "${res.node}" answered the ${verb} with "${tag}"`,
      );
    return n;
  });
}

/**
 * The copies of a reference table are identical, so a write must change as many rows on each;
 * if they differ, the copies already disagree and the write is rolled back rather than made worse.
 */
function copiesDisagree(results: readonly PartResult[], a: Analysis): Error | undefined {
  const counts = rowCounts(results, 'write');
  if (counts.every((n) => n === counts[0])) return undefined;
  const target = a.tables.find((t) => t.role === 'target');
  const name = target ? `${target.schema ?? 'public'}.${target.name}` : 'a reference table';
  return new RouterError(
    'XX001',
    `the copies of reference table ${name} disagree: this write changed ${results.map((r, i) => `${counts[i]} rows on node "${r.node}"`).join(', ')}; it was not applied anywhere`,
  );
}

/** DDL, maintenance or a reference write on every node; the client sees the first node's answer. */
export async function runOnAll(
  s: Session,
  r: AllRoute,
  a: Analysis,
  snapshot: Snapshot,
  bound?: Bound,
): Promise<void> {
  const parts = r.nodes.map((node, i) => ({
    node,
    sql: a.sql,
    after: r.after.get(node),
    bind: bound?.values,
    describe: i === 0 && bound?.describe === true,
  }));
  // Each node would take it in an implicit transaction of its own and drop it at once.
  if (r.why === 'lock' && !s.inTransaction())
    throw new RouterError(
      SQLSTATE.noActiveSqlTransaction,
      'LOCK TABLE can only be used in transaction blocks',
    );
  // A lock writes nothing: the nodes commit it one by one, no two-phase commit needed.
  const write = r.why !== 'lock';
  let results: PartResult[] = [];
  if (!transactional(r, a) && !s.inTransaction()) {
    results = await runParts(s, parts, true, snapshot);
    const error = firstError(results);
    if (error) throw error;
  } else {
    await atomically(s, async () => {
      results = await runParts(s, parts, write, snapshot);
      return (
        firstError(results) ??
        (r.why === 'reference_write' ? copiesDisagree(results, a) : undefined)
      );
    });
  }
  for (const b of results[0]!.output.pieces) s.out.push(b);
}

/**
 * A multi-row INSERT: each node gets its rows; the client sees one INSERT 0 N. RETURNING rows come
 * back in VALUES order, as one Postgres returns them (clients match them to their rows by
 * position): when a part returned another number of rows than it inserted (ON CONFLICT DO
 * NOTHING skipped one), that order is unknown and the INSERT is rolled back with 0A000.
 */
export async function runSplitInsert(
  s: Session,
  r: SplitInsertRoute,
  a: InsertAnalysis,
  snapshot: Snapshot,
  bound?: Bound,
): Promise<void> {
  const parts = r.parts.map((p, i): Part => {
    if (bound === undefined) return { node: p.node, sql: rebuildInsert(a, p.rows) };
    // Each part names only its rows' parameters, renumbered: one it left out has no type.
    const own = rebuildInsertRenumbered(a, p.rows);
    const bind = subsetOf(bound.values, own.paramIndexes);
    return { node: p.node, sql: own.sql, bind, describe: i === 0 && bound.describe };
  });
  let results: PartResult[] = [];
  let returning: Buffer[] = [];
  await atomically(s, async () => {
    results = await runParts(s, parts, true, snapshot);
    const error = firstError(results);
    if (error !== undefined || !a.hasReturning) return error;
    try {
      returning = returningInValuesOrder(r, results);
    } catch (e) {
      if (e instanceof MergeError) return new RouterError(e.sqlstate, e.message);
      throw e;
    }
    return undefined;
  });
  const total = rowCounts(results, 'INSERT').reduce((x, y) => x + y, 0);
  if (!a.hasReturning) for (const b of headOf(results[0]!)) s.out.push(b);
  for (const b of returning) s.out.push(b);
  s.out.push(writeCommandComplete(new Writer(32), `INSERT 0 ${total}`).flush());
}

/** What leads a statement's answer: RowDescription or NoData (if described) and notices. */
function isHead(code: number): boolean {
  return (
    code === BackendCode.RowDescription ||
    code === BackendCode.NoData ||
    code === BackendCode.NoticeResponse
  );
}

/** The head frames of one part's answer. */
export function headOf(result: PartResult): Buffer[] {
  const head: Buffer[] = [];
  const reader = new FrameReader();
  for (const piece of result.output.pieces) reader.push(piece);
  for (let f = reader.next(); f; f = reader.next())
    if (isHead(f.code)) head.push(Buffer.from(frameBytes(f)));
  return head;
}

/** The first part's RowDescription (and notices), then every part's rows in VALUES order. */
function returningInValuesOrder(r: SplitInsertRoute, results: readonly PartResult[]): Buffer[] {
  const head: Buffer[] = [];
  const parts = r.parts.map((p, i) => {
    const returned: Row[] = [];
    const reader = new FrameReader();
    for (const piece of results[i]!.output.pieces) reader.push(piece);
    for (let f = reader.next(); f; f = reader.next()) {
      if (f.code === BackendCode.DataRow) returned.push(decodeDataRow(Buffer.from(f.body)));
      else if (i === 0 && isHead(f.code)) head.push(Buffer.from(frameBytes(f)));
    }
    return { rows: p.rows, returned };
  });
  const rows = mergeReturning(parts);
  const w = new Writer(4096);
  for (const row of rows) writeDataRow(w, row);
  return [...head, w.flush()];
}

/**
 * UPDATE or DELETE on every node its rows may be on: one tag with the summed count; RETURNING
 * rows of every node after the first node's RowDescription (no order is promised, as in Postgres).
 */
export async function runMultiWrite(
  s: Session,
  r: MultiWriteRoute,
  a: Analysis,
  snapshot: Snapshot,
  bound?: Bound,
): Promise<void> {
  const verb = a.kind === 'update' ? 'UPDATE' : a.kind === 'delete' ? 'DELETE' : undefined;
  if (verb === undefined) throw new Error(`multi_write route for ${a.kind}`);
  const named = namedSnapshot(snapshot, sessionNames(s));
  let results: PartResult[] = [];
  await atomically(s, async () => {
    results = await runParts(
      s,
      r.nodes.map((node, i) => ({
        node,
        sql: ownedRowsOnly(named, node, a.sql),
        bind: bound?.values,
        describe: i === 0 && bound?.describe === true,
      })),
      true,
      snapshot,
    );
    return firstError(results);
  });
  const total = rowCounts(results, verb).reduce((x, y) => x + y, 0);
  results.forEach((res, i) => {
    const reader = new FrameReader();
    for (const p of res.output.pieces) reader.push(p);
    for (let f = reader.next(); f; f = reader.next()) {
      const keep = f.code === BackendCode.DataRow || (i === 0 && isHead(f.code));
      if (keep) s.out.push(Buffer.from(frameBytes(f)));
    }
  });
  s.out.push(writeCommandComplete(new Writer(32), `${verb} ${total}`).flush());
}
