// The leaves of a read across nodes, on the wire: each participating node's backend engaged (in
// the session's transaction when one is open), the leaf statement built for it (a simple Query,
// an unnamed extended cycle with the client's parameters, or a named portal read a page at a time
// for a cursor), started, and at the end drained and settled back. Also the router's own
// statements on one node (onNode), read the same way.
import {
  FLUSH,
  SYNC,
  Writer,
  writeBind,
  writeDescribe,
  writeExecute,
  writeParse,
  writeQuery,
} from '@tessera/pg-wire';
import type { LeafMessage } from '@tessera/merge';
import type { ReadPlan } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { RouterError } from '../errors.js';
import { engage, lost, settle } from '../execute/backends.js';
import { namedSnapshot } from '../routing/names.js';
import { ownedRowsOnly } from '../routing/owned-rows.js';
import type { ScatterRoute } from '../routing/route-types.js';
import { sessionNames } from '../session/names.js';
import type { Session } from '../session/session.js';
import type { BindValues } from '../statement/portal.js';
import { LeafRun, type Paging } from './leaf-run.js';

/** Rows a cursor's leaf fetches per page. */
const PAGE_ROWS = 256;

let portals = 0;

/**
 * Engages every node of `r` (into `engaged`, in node order, so two sessions scattering never wait
 * on each other in a cycle) and starts its leaf (into `leaves`): the caller finishes them, also
 * when this throws midway. Inside a transaction block each node runs the read in its part of the
 * transaction (a node new to it joins first) and is never cancelled, which would fail its part.
 * `formats`: the result formats the nodes are asked for (merge's leafResultFormats); `paged`:
 * each leaf is a named portal read a page at a time (a cursor), `held` a WITH HOLD cursor on
 * its node.
 */
export async function startLeaves(
  s: Session,
  r: ScatterRoute,
  plan: ReadPlan,
  req: { readonly snapshot: Snapshot; readonly bind?: BindValues | undefined },
  engaged: string[],
  leaves: LeafRun[],
  formats: readonly number[],
  paged: false | 'portal' | 'held' = false,
): Promise<void> {
  const catalog = req.snapshot;
  const named = namedSnapshot(catalog, sessionNames(s));
  const inBlock = s.txn.inBlock;
  const statements = r.nodes.map((node) => {
    const sql = ownedRowsOnly(named, node, plan.leafSql);
    const portal = `tessera_leaf_${++portals}`;
    const paging = paged ? { portal, rows: PAGE_ROWS, held: paged === 'held' } : undefined;
    const messages =
      paged === 'held'
        ? [
            writeQuery(
              new Writer(sql.length + 64),
              `DECLARE ${portal} CURSOR WITH HOLD FOR ${sql}`,
            ).flush(),
          ]
        : leafStatement(plan, sql, req.bind, formats, paging);
    return { messages, paging };
  });
  for (const [i, node] of r.nodes.entries()) {
    const e = await engage(s, node, catalog, inBlock);
    engaged.push(node);
    if (inBlock) s.txn.wrote(node, false);
    e.backend.unnamedOwner = undefined;
    const { messages, paging } = statements[i]!;
    const run = new LeafRun(
      e.backend,
      [...e.messages, ...messages],
      e.expect.length,
      !inBlock,
      paging,
    );
    leaves.push(run);
  }
  for (const l of leaves) l.start();
}

/**
 * Every leaf stopped (cancelled if still running) and drained; backends settle back (after
 * `drained`, which may unpin them).
 */
export async function finishLeaves(
  s: Session,
  nodes: readonly string[],
  leaves: readonly LeafRun[],
  merged = true,
  drained?: () => void,
): Promise<void> {
  for (const l of leaves) l.abandon();
  await Promise.all(leaves.map((l) => l.settled));
  drained?.();
  for (const node of nodes) {
    const h = s.held.get(node);
    if (h?.backend.dead) lost(s, h.backend);
    else settle(s, node);
  }
  if (merged) s.services.metrics.rowsMerged(leaves.reduce((n, l) => n + l.rows, 0));
}

/**
 * A simple Query when the leaf takes no parameters and all its results are text, else an unnamed
 * extended-protocol cycle; paged, the named portal's first page, then Flush. `sql` is the plan's
 * leaf SQL as this node runs it (owned-rows.ts); `resultFormats` the Bind's, as asked of nodes.
 */
function leafStatement(
  plan: ReadPlan,
  sql: string,
  bind: BindValues | undefined,
  resultFormats: readonly number[],
  paging: Paging | undefined,
): Buffer[] {
  const params = bind === undefined ? [] : plan.leafParams;
  if (paging === undefined && params.length === 0 && resultFormats.length === 0)
    return [writeQuery(new Writer(sql.length + 16), sql).flush()];
  if (bind !== undefined) {
    const missing = params.find((i) => i >= bind.values.length);
    if (missing !== undefined || bind.values.length < bind.paramCount)
      throw new RouterError(
        '08P01',
        `bind message supplies ${bind.values.length} parameters, but prepared statement "" requires ${bind.paramCount}`,
      );
  }
  const portal = paging?.portal ?? '';
  const w = new Writer(sql.length + 256);
  writeParse(
    w,
    '',
    sql,
    params.map((i) => bind?.types[i] ?? 0),
  );
  writeBind(w, {
    portal,
    paramFormats: params.map((i) => bind?.formats[i] ?? 0),
    params: params.map((i) => bind?.values[i] ?? null),
    resultFormats,
  });
  writeDescribe(w, 'P', portal);
  writeExecute(w, portal, paging?.rows ?? 0);
  w.bytes(paging === undefined ? SYNC : FLUSH);
  return [w.flush()];
}

/**
 * Runs the router's own statement on one node, handing each result message to `each`; `inTxn`:
 * inside the session's transaction (the node joins it first if it has to).
 */
export async function onNode(
  s: Session,
  node: string,
  messages: Buffer[],
  each: (m: LeafMessage) => void,
  catalog: Snapshot,
  inTxn = false,
): Promise<void> {
  const e = await engage(s, node, catalog, inTxn);
  e.backend.unnamedOwner = undefined;
  const run = new LeafRun(e.backend, [...e.messages, ...messages], e.expect.length, !inTxn);
  try {
    run.start();
    for await (const m of run) each(m);
  } finally {
    await finishLeaves(s, [node], [run], false);
  }
}
