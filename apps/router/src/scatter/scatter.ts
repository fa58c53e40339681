// A SELECT whose rows live on several nodes, at the wire edge: plan it (libs/sql planRead, cached
// by text), run the leaf SQL on every participating node in parallel (leaves.ts), merge
// with @tessera/merge, and write the client's RowDescription, DataRows and CommandComplete in
// batches, pausing while the client does not read. EXPLAIN [ANALYZE] shows the plan instead.
import { namedSnapshot } from '../routing/names.js';
import { sessionNames } from '../session/names.js';
import {
  SYNC,
  Writer,
  writeCommandComplete,
  writeDataRow,
  writeDescribe,
  writeParse,
  writeQuery,
  writeRowDescription,
} from '@tessera/pg-wire';
import {
  MergeError,
  executeReadPlan,
  leafResultFormats,
  type FieldDescription,
  type LeafMessage,
  type ResultMessage,
} from '@tessera/merge';
import {
  TRANSACTION_TIME_SQL,
  bindTransactionTime,
  formatTransactionTime,
  type Analysis,
  type ExplainAnalysis,
  type ReadPlan,
} from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import type { Snapshot } from '@tessera/keyspace';
import type { ScatterRoute } from '../routing/route-types.js';
import { isBytewiseCollation } from '../routing/planner-catalog.js';
import type { LeafRun } from './leaf-run.js';
import { finishLeaves, onNode, startLeaves } from './leaves.js';
import { explainLines, explainAnalyzeLines, QUERY_PLAN_FIELD } from './explain.js';
import { planFor, scatterMemory } from './plans.js';
import { executorParams, withFormats } from './formats.js';
import { BackendError } from '../pool/backend.js';
import type { Session } from '../session/session.js';
import type { BindValues } from '../statement/portal.js';

export interface ScatterRequest {
  /** The SELECT, or an EXPLAIN of one. */
  readonly analysis: Analysis;
  readonly bind?: BindValues | undefined;
  /** Whether the client is owed a RowDescription (simple Query, or a Describe of this portal). */
  readonly rowDescription: boolean;
  /** The snapshot the statement was admitted and routed by. */
  readonly snapshot: Snapshot;
}

/** Bytes of encoded rows gathered before they are written to the client. */
export const OUT_BATCH_BYTES = 32 * 1024;

const COLLATION_SQL =
  "select d.datcollate, coalesce(to_jsonb(d)->>'datlocprovider', 'c') from pg_database d where d.datname = current_database()";

/** Checks and plans a multi-node SELECT; a refusal is thrown as 0A000 with the planner's sentence. */
export async function planScatter(
  s: Session,
  r: ScatterRoute,
  a: Analysis,
  catalog: Snapshot,
): Promise<{ plan: ReadPlan; explain: ExplainAnalysis | undefined }> {
  const explain = a.kind === 'explain' ? a : undefined;
  const select = explain ? explain.inner : a;
  if (select.kind !== 'select')
    throw unsupported('only a SELECT can be answered from several nodes');
  if (explain?.options.includes('format'))
    throw unsupported(
      'EXPLAIN (FORMAT ...) of a read across nodes is not supported; use the text format',
    );
  const bytewise = await textIsBytewise(s, catalog, r.nodes[0] ?? catalog.home);
  const plan = planFor(s.services, namedSnapshot(catalog, sessionNames(s)), select.sql, bytewise);
  if (plan.kind === 'refuse') {
    s.services.metrics.statements('refused');
    throw unsupported(plan.reason);
  }
  s.services.metrics.statements('scatter');
  return { plan, explain };
}

export async function runScatter(s: Session, r: ScatterRoute, req: ScatterRequest): Promise<void> {
  const catalog = req.snapshot;
  const { plan, explain } = await planScatter(s, r, req.analysis, catalog);
  if (explain !== undefined && !explain.analyze)
    return sendLines(s, explainLines(plan, r.nodes), req);
  try {
    await runLeaves(s, r, req, await boundTime(s, r, plan, catalog), explain);
  } catch (e) {
    const select = explain ? explain.inner : req.analysis;
    throw await scatterError(s, r, e, select.sql, req);
  }
}

/**
 * The error a read across nodes ended with, as the client gets it. The node query's own text
 * (hidden aggregates in its select list, the router's rewrites) can change which of several
 * errors Postgres reports: the client's statement `sql`, parsed on one node, says which one
 * plain Postgres would report. A node's own error passes through as-is; the executor's become
 * errors with their SQLSTATE.
 */
export async function scatterError(
  s: Session,
  r: ScatterRoute,
  e: unknown,
  sql: string,
  req: Pick<ScatterRequest, 'bind' | 'snapshot'>,
): Promise<unknown> {
  if (e instanceof BackendError && e.sqlstate.startsWith('42'))
    return (await parseError(s, r, sql, req.bind?.types ?? [], req.snapshot)) ?? e;
  return e instanceof MergeError ? new RouterError(e.sqlstate, e.message) : e;
}

/**
 * The plan with its transaction's time: now(), current_date and the rest read one instant on
 * every node. Outside a transaction block that is the statement's start (the router's clock);
 * inside one, the transaction's own now() on the node it began on, asked once and kept for the
 * transaction (a deferred transaction begins on the read's first node for that).
 */
export async function boundTime(
  s: Session,
  r: ScatterRoute,
  plan: ReadPlan,
  catalog: Snapshot,
): Promise<ReadPlan> {
  if (!plan.usesTransactionTime) return plan;
  if (!s.txn.inBlock) {
    const micros = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
    return bindTransactionTime(plan, formatTransactionTime(micros));
  }
  if (s.txn.time === undefined) {
    let time: string | undefined;
    const ask = writeQuery(new Writer(128), TRANSACTION_TIME_SQL).flush();
    const node = s.txn.first ?? r.nodes[0] ?? catalog.home;
    const each = (m: LeafMessage): void => {
      if (m.kind === 'DataRow') time = m.values[0]?.toString('utf8');
    };
    await onNode(s, node, [ask], each, catalog, true);
    if (time === undefined)
      throw new RouterError(SQLSTATE.internalError, 'no transaction time from the first node');
    s.txn.time = time;
  }
  return bindTransactionTime(plan, s.txn.time);
}

async function runLeaves(
  s: Session,
  r: ScatterRoute,
  req: ScatterRequest,
  plan: ReadPlan,
  explain: ExplainAnalysis | undefined,
): Promise<void> {
  const bind = req.bind;
  // The client's result formats (EXPLAIN ANALYZE only counts the rows: text will do).
  const resultFormats = explain === undefined ? (bind?.resultFormats ?? []) : [];
  const leafFormats = leafResultFormats(plan, resultFormats);
  const params = bind ? executorParams(plan, bind) : [];
  const leaves: LeafRun[] = [];
  const engaged: string[] = [];
  const startedMs = performance.now();
  try {
    await startLeaves(s, r, plan, req, engaged, leaves, leafFormats);
    const results = executeReadPlan(plan, leaves, { params, resultFormats });
    if (explain !== undefined) {
      let rows = 0;
      for await (const m of results) if (m.kind === 'DataRow') rows++;
      const lines = explainAnalyzeLines(plan, r.nodes, leaves, rows, performance.now() - startedMs);
      return sendLines(s, lines, req);
    }
    await sendResults(s, results, req.rowDescription);
  } finally {
    await finishLeaves(s, engaged, leaves);
  }
}

/** The merged result to the client in batches; what came before an error goes before it. */
async function sendResults(
  s: Session,
  results: AsyncIterable<ResultMessage>,
  rowDescription: boolean,
): Promise<void> {
  const out = new Writer(OUT_BATCH_BYTES + 1024);
  try {
    for await (const m of results) {
      if (s.closed) break; // the generator's return() cancels every node's query
      switch (m.kind) {
        case 'RowDescription':
          if (rowDescription) writeRowDescription(out, m.fields);
          break;
        case 'DataRow':
          writeDataRow(out, m.values);
          if (out.length >= OUT_BATCH_BYTES) await writeOut(s, out);
          break;
        case 'CommandComplete':
          writeCommandComplete(out, m.tag);
          break;
      }
    }
  } finally {
    // As Postgres: the rows (and RowDescription) sent before an error stay sent.
    if (out.length > 0) s.out.push(out.flush());
  }
}

/** The error a Parse of the client's own statement gets on one node, if any. */
async function parseError(
  s: Session,
  r: ScatterRoute,
  sql: string,
  types: readonly number[],
  catalog: Snapshot,
): Promise<BackendError | undefined> {
  const w = new Writer(sql.length + 64);
  writeParse(w, '', sql, types);
  w.bytes(SYNC);
  try {
    await onNode(s, r.nodes[0] ?? catalog.home, [w.flush()], () => undefined, catalog);
    return undefined;
  } catch (e) {
    if (e instanceof BackendError) return e;
    throw e;
  }
}

/** Writes what `out` gathered to the client, waiting while the client does not read. */
export async function writeOut(s: Session, out: Writer): Promise<void> {
  s.out.push(out.flush());
  if (!s.out.flush()) await s.out.drained();
}

/**
 * EXPLAIN output: one text column named QUERY PLAN, a row per line (in binary, text's bytes are
 * the same: textsend).
 */
function sendLines(s: Session, lines: readonly string[], req: ScatterRequest): void {
  const w = new Writer(1024);
  const fields = withFormats([QUERY_PLAN_FIELD], req.bind?.resultFormats ?? []);
  if (req.rowDescription) writeRowDescription(w, fields);
  const format = fields[0]?.format ?? 0;
  if (format !== 0 && format !== 1) {
    s.out.push(w.flush());
    throw new RouterError('22023', `unsupported format code: ${format}`);
  }
  for (const line of lines) writeDataRow(w, [line]);
  writeCommandComplete(w, 'EXPLAIN');
  s.out.push(w.flush());
}

/**
 * The RowDescription a Describe of a multi-node portal answers: the statement described by one
 * node. The executor keeps the column names and types of plain Postgres (the differential oracle
 * checks both), so this is the description its rows arrive with.
 */
export async function describeScatter(
  s: Session,
  r: ScatterRoute,
  sql: string,
  types: readonly number[],
  catalog: Snapshot,
): Promise<readonly FieldDescription[] | undefined> {
  const w = new Writer(sql.length + 64);
  writeParse(w, '', sql, types);
  writeDescribe(w, 'S', '');
  w.bytes(SYNC);
  let fields: readonly FieldDescription[] | undefined;
  await onNode(
    s,
    r.nodes[0] ?? catalog.home,
    [w.flush()],
    (m) => {
      if (m.kind === 'RowDescription') fields = m.fields;
    },
    catalog,
  );
  return fields;
}

/** Whether the client's database orders text bytewise; asked of a node once per database. */
export async function textIsBytewise(
  s: Session,
  catalog: Snapshot,
  node: string,
): Promise<boolean> {
  const known = scatterMemory(s.services).bytewise;
  const cached = known.get(s.database);
  if (cached !== undefined) return cached;
  const q = writeQuery(new Writer(COLLATION_SQL.length + 16), COLLATION_SQL).flush();
  let bytewise = false;
  await onNode(
    s,
    node,
    [q],
    (m) => {
      if (m.kind !== 'DataRow') return;
      const [collate, provider] = m.values.map((v) => v?.toString('utf8') ?? '');
      bytewise = isBytewiseCollation(collate ?? '', provider ?? '');
    },
    catalog,
  );
  known.set(s.database, bytewise);
  return bytewise;
}
