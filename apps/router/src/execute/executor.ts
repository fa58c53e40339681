// The executor: one switch over route kinds for a statement admit() let through, whichever
// protocol it came by (`via`): a simple Query runs now; an extended Bind joins the batch's round
// when it goes to one node, and becomes a portal the router runs at its Execute otherwise; that
// Execute runs it under the decision (and snapshot) its Bind was admitted with. One node means
// single(): the one single-node send.
import type { Routed } from '../admit/decision.js';
import type { Epoch } from '../catalog/epochs.js';
import type { Effect } from '../commands/plan.js';
import { unsupported } from '../errors.js';
import { routeLabel, type CopyRoute, type Route } from '../routing/route-types.js';
import { isWrite } from '../routing/writes.js';
import { runScatter } from '../scatter/scatter.js';
import {
  declareAcross,
  executeInParts,
  fetchedInParts,
  onCursor,
  onRouterCursor,
  cursorNode,
  type CursorOut,
} from '../scatter/cursor-wire.js';
import type { Session } from '../session/session.js';
import {
  NO_SESSION_STATE,
  sessionStateOf,
  type Analysis,
  type CursorInfo,
  type SessionStateChange,
} from '@tessera/sql';
import type { Statement } from '../statement/statement.js';
import { portalResultFormats, type RouterPortal } from '../statement/portal.js';
import { acquire, acquisition, pipelinableRead } from './acquire.js';
import { QUERY_LANE } from '../pool/pool.js';
import { runCopySplit } from './copy-split.js';
import { runInsertSelect } from './insert-select.js';
import { runCopyOut } from './copy-out.js';
import { runMultiWrite, runOnAll, runSplitInsert, type Bound } from './fanout.js';
import { Round, sendRound } from './round.js';
import type { ExchangeResult } from './exchange.js';
import { pickNode, takePrelude } from './backends.js';

type SeveralPortal = RouterPortal & { kind: 'several' };

/** How the statement reached the router, and where its messages and results go. */
export type Via =
  /** A simple Query (one statement, or several run as one text): runs now. */
  | {
      readonly kind: 'query';
      readonly raw: Buffer;
      /** Recorded if the whole text ran (the SETs of a multi-statement Query). */
      readonly effects?: readonly Effect[];
      /** The session state the whole text leaves or clears (a multi-statement Query). */
      readonly state?: SessionStateChange;
      /** The round's answer, from `node`, after the router's bookkeeping. */
      readonly result: (r: ExchangeResult, node: string) => void;
    }
  /** An extended-protocol Bind: see BindVia. */
  | BindVia
  /** The Execute of a portal the router runs itself. */
  | { readonly kind: 'portal'; readonly portal: SeveralPortal; readonly maxRows: number };

/** An extended Bind, with what its batch knows (protocol/extended.ts). */
export interface BindVia {
  readonly kind: 'bind';
  readonly round: Round;
  /** The node a statement goes to: `node`, or for one any node answers, the batch's. */
  nodeFor(node: string, flexible: boolean): string;
  /**
   * The batch's round for a statement on `node`: its round, or when that is on another node a
   * new one after it was sent (the batch then runs in a transaction across nodes).
   */
  roundFor(node: string): Round | Promise<Round>;
  /**
   * Adds the statement's own messages (Parse if need be, the Bind) once the backend is there;
   * `effect` and `state` are applied if its Execute, later in the batch, succeeds.
   */
  push(round: Round, effect: Effect | undefined, state: SessionStateChange): void;
  /** The server name of a prepared read that may share a lane (undefined: it may not). */
  readonly laneName: string | undefined;
  /** Keeps a statement for several nodes as a portal, run at its Execute. */
  keep(portal: SeveralPortal): void;
  /** Builds that portal's Bind values. */
  portal(d: Routed<Epoch>): SeveralPortal;
}

export function execute(
  s: Session,
  stmt: Statement,
  d: Routed<Epoch>,
  via: Via,
): Promise<void> | undefined {
  const r = d.route;
  const a = stmt.analysis;
  if (onRouterCursor(s, a)) return several(s, d, via, () => onCursor(s, a, cursorOut(via)));
  // A cursor over a read across nodes is the router's (WITH HOLD ones pin their nodes there).
  if (r.kind === 'scatter' && a.kind === 'utility' && a.command === 'declare_cursor')
    return several(s, d, via, () => declareAcross(s, r, a, d.epoch.snapshot, cursorOut(via)));
  const state = via.kind === 'query' && via.state !== undefined ? via.state : stateOf(stmt);
  if (state !== NO_SESSION_STATE && r.kind !== 'node' && r.kind !== 'refuse')
    refuseStateAcross(state, r);
  // Counted at admission; a read across nodes once planned (or refused by the planner).
  if (via.kind !== 'portal' && r.kind !== 'scatter') s.services.metrics.statements(routeLabel(r));
  switch (r.kind) {
    case 'node': {
      const placed = placeState(s, stmt, state, d, r.node, r.flexible);
      if (placed === undefined) return single(s, stmt, d, r.node, r.flexible, via, state);
      return single(s, stmt, d, placed, false, via, state);
    }
    case 'copy':
      return copy(s, stmt, d, r, via);
    case 'all':
      if (r.nodes.length === 1 && via.kind === 'query')
        return single(s, stmt, d, r.nodes[0]!, false, via, state);
      return several(s, d, via, () =>
        runOnAll(s, r, stmt.analysis, d.epoch.snapshot, boundOf(via)),
      );
    case 'multi_write':
      return several(s, d, via, () =>
        runMultiWrite(s, r, stmt.analysis, d.epoch.snapshot, boundOf(via)),
      );
    case 'scatter':
      if (a.kind === 'copy_to')
        return several(s, d, via, () => runCopyOut(s, r, a, d.epoch.snapshot));
      if (via.kind === 'portal' && (via.maxRows > 0 || fetchedInParts(s, via.portal)))
        return counted(d.epoch, executeInParts(s, r, via.portal, via.maxRows));
      return several(s, d, via, () =>
        runScatter(s, r, {
          analysis: stmt.analysis,
          rowDescription: via.kind === 'query' || (via.kind === 'portal' && via.portal.describe),
          bind: via.kind === 'portal' ? via.portal.bind : undefined,
          snapshot: d.epoch.snapshot,
        }),
      );
    case 'split': {
      const a = stmt.analysis;
      if (a.kind !== 'insert') throw new Error(`split route for ${a.kind}`);
      return several(s, d, via, () => runSplitInsert(s, r, a, d.epoch.snapshot, boundOf(via)));
    }
    case 'insert_select': {
      const a = stmt.analysis;
      if (a.kind !== 'insert') throw new Error(`insert_select route for ${a.kind}`);
      return several(s, d, via, () => runInsertSelect(s, r, a, d.epoch.snapshot, boundOf(via)));
    }
    case 'refuse':
      throw unsupported(r.message);
    case 'params':
      throw unsupported('a bind parameter in a simple query');
    default:
      return assertNever(r);
  }
}

function copy(
  s: Session,
  stmt: Statement,
  d: Routed<Epoch>,
  r: CopyRoute,
  via: Via,
): Promise<void> | undefined {
  if (r.mode === 'node') return single(s, stmt, d, r.node, false, via, NO_SESSION_STATE);
  if (via.kind !== 'query')
    throw unsupported('this statement is not supported through the extended query protocol yet');
  return counted(d.epoch, runCopySplit(s, r, stmt.analysis, d.epoch.snapshot));
}

/** A statement on several nodes: run now, or (a Bind) kept for its Execute. */
function several(
  s: Session,
  d: Routed<Epoch>,
  via: Via,
  run: () => Promise<void>,
): Promise<void> | undefined {
  if (via.kind === 'bind') {
    via.keep(via.portal(d));
    return undefined;
  }
  if (via.kind === 'portal' && via.maxRows > 0 && hasReturning(via.portal.analysis))
    throw unsupported(
      'fetching the RETURNING rows of a write across nodes in parts (Execute with a row limit) is not supported yet',
    );
  return counted(d.epoch, run());
}

/** A portal's Bind, for a write the router runs on several nodes with the client's values. */
function boundOf(via: Via): Bound | undefined {
  if (via.kind !== 'portal' || via.portal.bound === undefined) return undefined;
  return { values: via.portal.bound, describe: via.portal.describe };
}

function hasReturning(a: Analysis): boolean {
  return (a.kind === 'insert' || a.kind === 'update' || a.kind === 'delete') && a.hasReturning;
}

/**
 * A simple Query of one plain read (runOne: no SETs or session state with it) may share a lane
 * with other sessions' reads, as a prepared one may (acquisition decides).
 */
function queryLane(stmt: Statement, via: Via): string | undefined {
  if (via.kind !== 'query' || via.effects !== undefined || via.state !== undefined)
    return undefined;
  return pipelinableRead(stmt.analysis) ? QUERY_LANE : undefined;
}

/** Whether a cursor's answer starts with a RowDescription: a simple Query, or a Describe before. */
const cursorOut = (via: Via): CursorOut => ({
  rowDescription: via.kind === 'query' || (via.kind === 'portal' && via.portal.describe),
  described: via.kind === 'portal' && via.portal.describe,
  formats: via.kind === 'portal' ? portalResultFormats(via.portal) : [],
});

/** `run` counts as running under `epoch` until it settles. */
function counted(epoch: Epoch, run: Promise<void>): Promise<void> {
  epoch.enter();
  return run.finally(() => epoch.leave());
}

/**
 * The one single-node send: the statement's backend taken by its policy (acquire.ts), its
 * messages added to the round, what the router records once it ran; a Query's round is sent now.
 */
function single(
  s: Session,
  stmt: Statement,
  d: Routed<Epoch>,
  target: string,
  flexible: boolean,
  via: Via,
  state: SessionStateChange,
): Promise<void> | undefined {
  if (via.kind === 'portal') throw new Error('a one-node statement kept as a router portal');
  if (via.kind === 'query')
    return take(s, stmt, d, new Round(), pickNode(s, target, flexible), via, state);
  const node = via.nodeFor(target, flexible);
  const round = via.roundFor(node);
  if (round instanceof Promise) return round.then((r) => take(s, stmt, d, r, node, via, state));
  return take(s, stmt, d, round, node, via, state);
}

/** The statement's backend for `node` in `round`: taken by its policy, or the round's own. */
function take(
  s: Session,
  stmt: Statement,
  d: Routed<Epoch>,
  round: Round,
  node: string,
  via: Via & { kind: 'query' | 'bind' },
  state: SessionStateChange,
): Promise<void> | undefined {
  if (round.backend === undefined) {
    const laneName = via.kind === 'bind' ? via.laneName : queryLane(stmt, via);
    const policy = acquisition(s, node, laneName);
    const got = acquire(s, round, node, d.epoch.snapshot, policy, true, laneName);
    if (got instanceof Promise) return got.then(() => queue(s, stmt, d, round, via, state));
  } else {
    takePrelude(s, node, round.messages, round.expect);
  }
  return queue(s, stmt, d, round, via, state);
}

/** The statement's messages on the round's backend; a Query's round goes now. */
function queue(
  s: Session,
  stmt: Statement,
  d: Routed<Epoch>,
  round: Round,
  via: Via & { kind: 'query' | 'bind' },
  state: SessionStateChange,
): Promise<void> | undefined {
  const node = round.node!;
  const a = stmt.analysis;
  // Only a transaction's parts record writes (an autocommit read skips the function check).
  if (s.txn.inBlock) {
    s.txn.wrote(node, isWrite(a), d.epoch.snapshot.epoch, a.tables.length > 0);
    // A cursor declared here: its FETCH, MOVE and CLOSE come back to this node (placeState).
    if (a.kind === 'utility' && a.cursor !== undefined) noteCursor(s, a.command, a.cursor, node);
  }
  round.enter(d.epoch);
  if (via.kind === 'bind') {
    round.note(a);
    via.push(round, d.effect, state);
    return undefined;
  }
  round.messages.push(via.raw);
  round.expect.push({ t: 'query', ready: false });
  round.collectTags = true;
  const at = round.expect.length - 1;
  if (d.effect !== undefined) round.after(at, d.effect);
  for (const e of via.effects ?? []) round.after(at, e);
  if (state !== NO_SESSION_STATE) round.after(at, { kind: 'state', change: state });
  return sendRound(s, round, false).then((r) => via.result(r, node));
}

/** A one-node SQL cursor's node, remembered from its DECLARE to its CLOSE (placeState). */
function noteCursor(s: Session, command: string, cursor: CursorInfo, node: string): void {
  if (command === 'declare_cursor' && !cursor.hold) s.sqlCursors.set(cursor.name ?? '', node);
  else if (command !== 'close') return;
  else if (cursor.name !== undefined) s.sqlCursors.delete(cursor.name);
  else for (const [name, at] of s.sqlCursors) if (typeof at === 'string') s.sqlCursors.delete(name);
}

/** The session state a statement leaves or clears, read once per analysis (they are cached). */
const states = new WeakMap<object, SessionStateChange>();
function stateOf(stmt: Statement): SessionStateChange {
  const a = stmt.analysis;
  let st = states.get(a);
  if (st === undefined) states.set(a, (st = sessionStateOf(a)));
  return st;
}

/**
 * Where a one-node statement with session state runs (not flexible), or undefined where it
 * routes: advisory locks and LISTEN/NOTIFY on the home node (one lock and channel space for
 * every client); FETCH, MOVE and CLOSE of a WITH HOLD cursor on the node that holds it; the rest
 * where it routes (a temporary table is created on home, and a name no catalog table has
 * resolves to home too).
 */
function placeState(
  s: Session,
  stmt: Statement,
  state: SessionStateChange,
  d: Routed<Epoch>,
  node: string,
  flexible: boolean,
): string | undefined {
  const a = stmt.analysis;
  const at = a.kind === 'utility' ? cursorNode(s, a) : undefined;
  if (at !== undefined) return at;
  if (!state.homeOnly) return undefined;
  const home = d.epoch.snapshot.home;
  if (flexible || node === home) return home;
  throw unsupported(
    `advisory locks, LISTEN and NOTIFY run on the home node, and this statement also reads or writes rows on node "${node}"; send them as separate statements`,
  );
}

/** A statement on several nodes cannot take advisory locks, listen, or leave session state. */
function refuseStateAcross(state: SessionStateChange, r: Route): void {
  if (!state.homeOnly && state.creates.length === 0) return;
  throw unsupported(
    `a statement that takes advisory locks, listens or makes session state cannot run on several nodes (route ${r.kind}); send it as its own statement`,
  );
}

function assertNever(x: never): never {
  throw new TypeError(`unhandled route ${JSON.stringify(x as Route)}`);
}
