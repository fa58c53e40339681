// COPY ... TO STDOUT of rows on several nodes, at the wire edge. A table, or a query each node
// answers whole (the planner's plan is its scatter alone), runs as the same COPY on every node,
// the outputs joined: the first node's CopyOutResponse, every node's rows (one header line in text
// and CSV, one binary header and trailer), one CopyDone and `COPY n` with the total. A query
// whose rows are merged at the router (order, aggregates, limits) is planned and run as a read
// across nodes, its merged rows written as COPY writes them (copy-out-merge.ts). Only the ranges
// each node owns are read (routing/owned-rows.ts); in a transaction block each node joins it.
import {
  COPY_DONE,
  Writer,
  writeCommandComplete,
  writeCopyData,
  writeQuery,
} from '@tessera/pg-wire';
import type { Snapshot } from '@tessera/keyspace';
import { copyOptionsSql, quoteIdent, quoteQualified, type CopyToAnalysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { namedSnapshot } from '../routing/names.js';
import { ownedRowsOnly } from '../routing/owned-rows.js';
import type { ScatterRoute } from '../routing/route-types.js';
import { lookupTable } from '../routing/tables.js';
import { planFor } from '../scatter/plans.js';
import { boundTime, textIsBytewise } from '../scatter/scatter.js';
import { sessionNames } from '../session/names.js';
import type { Session } from '../session/session.js';
import { BinaryCopyJoiner, BinaryCopyError } from '../copy/copy-binary.js';
import { BackendError } from '../pool/backend.js';
import { engage, lost, settle } from './backends.js';
import { tableColumns } from './copy-columns.js';
import { CopyOutRun } from './copy-out-run.js';
import { copyMerged, probeError } from './copy-out-merge.js';

/** Bytes gathered for the client before they are written (and its reading waited for). */
const OUT_BATCH_BYTES = 32 * 1024;

export async function runCopyOut(
  s: Session,
  r: ScatterRoute,
  a: CopyToAnalysis,
  catalog: Snapshot,
): Promise<void> {
  if (a.destination !== 'stdout')
    throw unsupported(
      'COPY TO a file or program on the server of rows on several nodes is not supported; copy TO STDOUT (psql: \\copy)',
    );
  const named = namedSnapshot(catalog, sessionNames(s));
  const query = a.query;
  if (query === undefined) {
    s.services.metrics.statements('scatter');
    return concatenate(s, r, a, await tableSqlFor(s, r, a, named), catalog);
  }
  if (query.kind !== 'select') throw unsupported('only a SELECT can be copied from several nodes');
  const bytewise = await textIsBytewise(s, catalog, r.nodes[0] ?? catalog.home);
  const plan = planFor(s.services, named, query.sql, bytewise);
  if (plan.kind === 'refuse') {
    s.services.metrics.statements('refused');
    throw unsupported(plan.reason);
  }
  s.services.metrics.statements('scatter');
  const bound = await boundTime(s, r, plan, catalog);
  if (bound.root.kind !== 'scatter') return copyMerged(s, r, a, bound, catalog);
  // Each node's rows are the answer's rows: the client's COPY with the leaf query in its place.
  const at = query.location - a.location;
  const before = a.sql.slice(0, at);
  const after = a.sql.slice(at + query.sql.length);
  const sqlFor = (node: string): string =>
    before + ownedRowsOnly(named, node, bound.leafSql) + after;
  try {
    return await concatenate(s, r, a, sqlFor, catalog);
  } catch (e) {
    // The leaf query's own text can change which error Postgres reports (and where).
    if (e instanceof BackendError && e.sqlstate.startsWith('42'))
      throw (await probeError(s, r, a, catalog)) ?? e;
    throw e;
  }
}

/**
 * What each node runs for COPY of a table: the client's statement, or, while a range of its
 * keyspace moves, a COPY of the node's owned rows written as a query over the same columns.
 */
async function tableSqlFor(
  s: Session,
  r: ScatterRoute,
  a: CopyToAnalysis,
  named: Snapshot,
): Promise<(node: string) => string> {
  const ref = a.tables[a.tableIndex ?? 0];
  const view = ref === undefined ? undefined : lookupTable(named, ref.schema, ref.name);
  if (view?.kind !== 'sharded' || !named.moves.has(view.keyspace.name)) return () => a.sql;
  const table = quoteQualified(view.schema, view.name);
  const columns =
    a.columns ?? (await tableColumns(s, table, r.nodes[0]!, named)).map((c) => c.name);
  const select = `SELECT ${columns.map(quoteIdent).join(', ')} FROM ONLY ${table}`;
  const options = copyOptionsSql(a.options);
  return (node) => `COPY (${ownedRowsOnly(named, node, select)}) TO STDOUT${options}`;
}

/** Runs `sqlFor(node)` on every node, in node order, and joins the outputs into one COPY. */
async function concatenate(
  s: Session,
  r: ScatterRoute,
  a: CopyToAnalysis,
  sqlFor: (node: string) => string,
  catalog: Snapshot,
): Promise<void> {
  const runs: CopyOutRun[] = [];
  const engaged: string[] = [];
  try {
    // Acquired in node order, so two sessions copying never wait on each other in a cycle.
    for (const node of r.nodes) {
      const e = await engage(s, node, catalog);
      engaged.push(node);
      if (s.txn.inBlock) s.txn.wrote(node, false);
      e.backend.unnamedOwner = undefined;
      const sql = sqlFor(node);
      const q = writeQuery(new Writer(sql.length + 16), sql).flush();
      runs.push(new CopyOutRun(e.backend, [...e.messages, q], e.expect.length));
    }
    for (const run of runs) run.start();
    const total = await joinOutputs(s, a, runs).catch((e: unknown) => {
      // Never expected of Postgres: a node's binary stream that cannot be joined.
      throw e instanceof BinaryCopyError ? new RouterError(SQLSTATE.internalError, e.message) : e;
    });
    s.out.push(COPY_DONE);
    s.out.push(writeCommandComplete(new Writer(32), `COPY ${total}`).flush());
  } finally {
    for (const run of runs) run.abandon();
    await Promise.all(runs.map((run) => run.settled));
    for (const node of engaged) {
      const h = s.held.get(node);
      if (h?.backend.dead) lost(s, h.backend);
      else settle(s, node);
    }
  }
}

/** Every node's output, one node after the other, written to the client; the rows copied. */
async function joinOutputs(
  s: Session,
  a: CopyToAnalysis,
  runs: readonly CopyOutRun[],
): Promise<number> {
  const binary = a.options.format === 'binary';
  const header = !binary && a.options.header !== false;
  let pending = 0;
  const send = async (b: Buffer): Promise<void> => {
    s.out.push(b);
    pending += b.length;
    if (pending < OUT_BATCH_BYTES) return;
    pending = 0;
    if (!s.out.flush()) await s.out.drained();
  };
  // Binary: one header (with the first tuple, as Postgres sends it), tuples, one trailer.
  const out: Buffer[] = [];
  const joiner = new BinaryCopyJoiner((b) => out.push(b));
  let total = 0;
  let responded = false;
  for (const [i, run] of runs.entries()) {
    if (s.closed) break; // the client left: the nodes' COPYs are cancelled (finally)
    let first = true;
    if (i > 0 && binary) joiner.nextStream();
    for await (const f of run) {
      if (s.closed) break;
      if (f.kind === 'response') {
        if (!responded) await send(f.frame);
        responded = true;
      } else if (f.kind === 'complete') {
        total += Number(/^COPY (\d+)$/.exec(f.tag)?.[1] ?? 0);
      } else if (binary) {
        joiner.push(f.data);
        for (const b of out.splice(0))
          await send(writeCopyData(new Writer(b.length + 8), b).flush());
      } else if (!(header && first && i > 0)) {
        await send(f.frame);
      }
      if (f.kind === 'data') first = false;
    }
  }
  if (binary) {
    joiner.end();
    for (const b of out.splice(0)) await send(writeCopyData(new Writer(b.length + 8), b).flush());
  }
  return total;
}
