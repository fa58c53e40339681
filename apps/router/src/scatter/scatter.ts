// A SELECT whose rows live on several nodes, at the wire edge: plan it (libs/sql planRead, cached
// by text), run the leaf SQL on every participating node in parallel (leaf-run.ts), merge
// with @tessera/merge, and write the client's RowDescription, DataRows and CommandComplete in
// batches, pausing while the client does not read. EXPLAIN [ANALYZE] shows the plan instead.
import { namedSnapshot } from '../routing/names.js';
import { sessionNames } from '../session/names.js';
import {
  SYNC,
  Writer,
  writeBind,
  writeCommandComplete,
  writeDataRow,
  writeDescribe,
  writeExecute,
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
  bindTransactionTime,
  formatTransactionTime,
  type Analysis,
  type ExplainAnalysis,
  type ReadPlan,
} from '@tessera/sql';
import { RouterError, unsupported } from '../errors.js';
import type { Snapshot } from '@tessera/keyspace';
import type { ScatterRoute } from '../routing/route-types.js';
import { isBytewiseCollation } from '../routing/planner-catalog.js';
import { ownedRowsOnly } from '../routing/owned-rows.js';
import { LeafRun } from './leaf-run.js';
import { explainLines, explainAnalyzeLines, QUERY_PLAN_FIELD } from './explain.js';
import { planFor, scatterMemory } from './plans.js';
import { executorParams, withFormats } from './formats.js';
import { engage, lost, settle } from '../execute/backends.js';
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
const OUT_BATCH_BYTES = 32 * 1024;

const COLLATION_SQL =
  "select d.datcollate, coalesce(to_jsonb(d)->>'datlocprovider', 'c') from pg_database d where d.datname = current_database()";

/** Checks and plans a multi-node SELECT; a refusal is thrown as 0A000 with the planner's sentence. */
async function planScatter(
  s: Session,
  r: ScatterRoute,
  a: Analysis,
  catalog: Snapshot,
): Promise<{ plan: ReadPlan; explain: ExplainAnalysis | undefined }> {
  if (s.inTransaction())
    throw unsupported(
      'a read across nodes inside a transaction block is not supported yet (it would need the transaction on every node); run it outside the transaction or pin the key to one node',
    );
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
    await runLeaves(s, r, req, bindTime(plan), explain);
  } catch (e) {
    // The node query's own text (hidden aggregates in its select list, the router's rewrites) can
    // change which of several errors Postgres reports: the client's statement, parsed on one node,
    // says which one plain Postgres would report.
    if (e instanceof BackendError && e.sqlstate.startsWith('42')) {
      const select = explain ? explain.inner : req.analysis;
      throw (await parseError(s, r, select.sql, req.bind?.types ?? [], catalog)) ?? e;
    }
    // A node's own error passes through as-is; the executor's become ErrorResponses here.
    throw e instanceof MergeError ? new RouterError(e.sqlstate, e.message) : e;
  }
}

/**
 * The plan with its statement's time: now(), current_date and the rest read one instant on every
 * node, the router's clock at the statement's start (a read across nodes runs outside a
 * transaction block, where Postgres's transaction time is the statement's start).
 */
function bindTime(plan: ReadPlan): ReadPlan {
  if (!plan.usesTransactionTime) return plan;
  const micros = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
  return bindTransactionTime(plan, formatTransactionTime(micros));
}

async function runLeaves(
  s: Session,
  r: ScatterRoute,
  req: ScatterRequest,
  plan: ReadPlan,
  explain: ExplainAnalysis | undefined,
): Promise<void> {
  const catalog = req.snapshot;
  const bind = req.bind;
  const named = namedSnapshot(catalog, sessionNames(s));
  // The client's result formats (EXPLAIN ANALYZE only counts the rows: text will do).
  const resultFormats = explain === undefined ? (bind?.resultFormats ?? []) : [];
  const leafFormats = leafResultFormats(plan, resultFormats);
  const leafMessages = r.nodes.map((node) =>
    leafStatement(plan, ownedRowsOnly(named, node, plan.leafSql), bind, leafFormats),
  );
  const params = bind ? executorParams(plan, bind) : [];
  const leaves: LeafRun[] = [];
  const engaged: string[] = [];
  const startedMs = performance.now();
  try {
    // Acquired in node order, so two sessions scattering never wait on each other in a cycle.
    for (const [i, node] of r.nodes.entries()) {
      const e = await engage(s, node, catalog, false);
      engaged.push(node);
      e.backend.unnamedOwner = undefined;
      leaves.push(new LeafRun(e.backend, [...e.messages, ...leafMessages[i]!], e.expect.length));
    }
    for (const l of leaves) l.start();
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

/** Every leaf stopped (cancelled if still running) and drained; backends settle back. */
async function finishLeaves(
  s: Session,
  nodes: readonly string[],
  leaves: readonly LeafRun[],
  merged = true,
): Promise<void> {
  for (const l of leaves) l.abandon();
  await Promise.all(leaves.map((l) => l.settled));
  for (const node of nodes) {
    const h = s.held.get(node);
    if (h?.backend.dead) lost(s, h.backend);
    else settle(s, node);
  }
  if (merged) s.services.metrics.rowsMerged(leaves.reduce((n, l) => n + l.rows, 0));
}

async function writeOut(s: Session, out: Writer): Promise<void> {
  s.out.push(out.flush());
  if (!s.out.flush()) await s.out.drained();
}

/**
 * A simple Query when the leaf takes no parameters and all its results are text, else an unnamed
 * extended-protocol cycle. `sql` is the plan's leaf SQL as this node runs it (owned-rows.ts);
 * `resultFormats` are leafResultFormats' (the Bind's own form).
 */
function leafStatement(
  plan: ReadPlan,
  sql: string,
  bind: BindValues | undefined,
  resultFormats: readonly number[],
): Buffer[] {
  if (bind === undefined || (plan.leafParams.length === 0 && resultFormats.length === 0))
    return [writeQuery(new Writer(sql.length + 16), sql).flush()];
  const missing = plan.leafParams.find((i) => i >= bind.values.length);
  if (missing !== undefined || bind.values.length < bind.paramCount)
    throw new RouterError(
      '08P01',
      `bind message supplies ${bind.values.length} parameters, but prepared statement "" requires ${bind.paramCount}`,
    );
  const w = new Writer(sql.length + 256);
  writeParse(
    w,
    '',
    sql,
    plan.leafParams.map((i) => bind.types[i] ?? 0),
  );
  writeBind(w, {
    paramFormats: plan.leafParams.map((i) => bind.formats[i] ?? 0),
    params: plan.leafParams.map((i) => bind.values[i] ?? null),
    resultFormats,
  });
  writeDescribe(w, 'P', '');
  writeExecute(w);
  w.bytes(SYNC);
  return [w.flush()];
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
async function textIsBytewise(s: Session, catalog: Snapshot, node: string): Promise<boolean> {
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

/** Runs the router's own statement on one node, handing each result message to `each`. */
async function onNode(
  s: Session,
  node: string,
  messages: Buffer[],
  each: (m: LeafMessage) => void,
  catalog: Snapshot,
): Promise<void> {
  const e = await engage(s, node, catalog, false);
  e.backend.unnamedOwner = undefined;
  const run = new LeafRun(e.backend, [...e.messages, ...messages], e.expect.length);
  try {
    run.start();
    for await (const m of run) each(m);
  } finally {
    await finishLeaves(s, [node], [run], false);
  }
}
