// Cursors over reads across nodes, on the wire (cursor.ts runs them): an extended-protocol
// Execute with a row limit of a multi-node portal, and DECLARE / FETCH / MOVE / CLOSE of an SQL
// cursor declared over a read across nodes, answered as Postgres answers them; and where they
// end: their portal closed or bound again, the Sync of an implicit transaction, the end of the
// transaction (or a ROLLBACK TO a savepoint made before them).
import {
  NO_DATA,
  PORTAL_SUSPENDED,
  Writer,
  writeCommandComplete,
  writeDataRow,
  writeRowDescription,
} from '@tessera/pg-wire';
import type { Analysis, UtilityAnalysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { ClientFormats } from '@tessera/merge';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import type { ScatterRoute } from '../routing/route-types.js';
import type { OpenCursor, Session } from '../session/session.js';
import type { RouterPortal } from '../statement/portal.js';
import { ScatterCursor, closeCursors } from './cursor.js';
import { everyTxnNode } from '../execute/cross-node.js';
import { OUT_BATCH_BYTES, writeOut } from './scatter.js';

type SeveralPortal = RouterPortal & { kind: 'several' };

/** Where the answer goes and whether a RowDescription is owed (a simple Query, or a Describe before). */
export interface CursorOut {
  readonly rowDescription: boolean;
  /** A Describe of its portal came just before (extended protocol): owed its answer first. */
  readonly described: boolean;
  /** The result formats the FETCH's Bind asked for (none: text). */
  readonly formats: readonly number[];
}

/** An Execute with a row limit of a multi-node portal, or the next Execute of one fetched in parts. */
export async function executeInParts(
  s: Session,
  r: ScatterRoute,
  p: SeveralPortal,
  maxRows: number,
): Promise<void> {
  let c = portalCursor(s, p);
  if (c === undefined) {
    const snapshot = p.decision.epoch.snapshot;
    c = await ScatterCursor.open(s, r, { select: p.analysis, bind: p.bind, snapshot, owner: p });
  }
  const out = new Writer(OUT_BATCH_BYTES + 1024);
  if (p.describe) writeRowDescription(out, c.fields);
  const n = await c.fetch(maxRows > 0 ? maxRows : 'all', (values) => row(s, out, values));
  if (c.finished) {
    finishedPortals.set(p, c);
    writeCommandComplete(out, `SELECT ${n}`);
  } else out.bytes(PORTAL_SUSPENDED);
  s.out.push(out.flush());
}

/** The cursor a portal is being fetched by (a finished one stays, answering SELECT 0). */
function portalCursor(s: Session, p: SeveralPortal): ScatterCursor | undefined {
  return finishedPortals.get(p) ?? find(s, (c) => c.owner === p);
}

/** Portals fetched to their end: their cursor is closed, their next Execute answers no rows. */
const finishedPortals = new WeakMap<object, ScatterCursor>();

function find(s: Session, which: (c: OpenCursor) => boolean): ScatterCursor | undefined {
  for (const c of s.cursors) if (which(c) && c instanceof ScatterCursor) return c;
  return undefined;
}

async function row(s: Session, out: Writer, values: readonly (Buffer | null)[]): Promise<void> {
  writeDataRow(out, values);
  if (out.length >= OUT_BATCH_BYTES) await writeOut(s, out);
}

/** DECLARE name CURSOR FOR a read across nodes, inside a transaction block. */
export async function declareAcross(
  s: Session,
  r: ScatterRoute,
  a: UtilityAnalysis,
  snapshot: Snapshot,
  out: CursorOut,
): Promise<void> {
  const name = a.cursor?.name ?? '';
  const query = a.query!;
  const hold = a.cursor?.hold === true;
  if (!hold && !s.txn.inBlock)
    throw new RouterError(
      SQLSTATE.noActiveSqlTransaction,
      'DECLARE CURSOR can only be used in transaction blocks',
    );
  if (a.cursor?.scroll === true)
    throw unsupported('a SCROLL cursor over a read across nodes is not supported (forward only)');
  if (a.cursor?.binary === true)
    throw unsupported('a BINARY cursor over a read across nodes is not supported');
  if (s.sqlCursors.has(name))
    throw new RouterError(SQLSTATE.duplicateCursor, `cursor "${name}" already exists`);
  const c = await ScatterCursor.open(s, r, { select: query, snapshot, owner: name, hold });
  s.sqlCursors.set(name, c);
  s.out.push(frames(out.described ? [NO_DATA] : [], 'DECLARE CURSOR'));
}

/**
 * The node a FETCH, MOVE or CLOSE goes to when its cursor was declared on one node (in the open
 * transaction, or WITH HOLD and pinned there); undefined otherwise.
 */
export function cursorNode(s: Session, a: Analysis): string | undefined {
  if (a.kind !== 'utility' || a.cursor?.name === undefined || a.command === 'declare_cursor')
    return undefined;
  const at =
    (s.pinned.size > 0 ? s.pinned.cursorNode(a.cursor.name) : undefined) ??
    s.sqlCursors.get(a.cursor.name);
  return typeof at === 'string' ? at : undefined;
}

/** Whether `a` is a FETCH, MOVE or CLOSE of a cursor the router runs (declareAcross). */
export function onRouterCursor(s: Session, a: Analysis): boolean {
  if (s.sqlCursors.size === 0 || a.kind !== 'utility') return false;
  if (a.command !== 'fetch' && a.command !== 'move' && a.command !== 'close') return false;
  const name = a.cursor?.name;
  return name === undefined ? a.command === 'close' : typeof s.sqlCursors.get(name) === 'object';
}

/** FETCH, MOVE or CLOSE of a router cursor (onRouterCursor), answered as Postgres does. */
export async function onCursor(s: Session, a: Analysis, out: CursorOut): Promise<void> {
  if (a.kind !== 'utility') throw new Error('not a cursor command');
  const name = a.cursor?.name;
  if (a.command === 'close') {
    for (const [n, c] of s.sqlCursors)
      if (typeof c === 'object' && (name === undefined || n === name)) s.sqlCursors.delete(n);
    await closeCursors(s, (c) => typeof c.owner === 'string' && (name ?? c.owner) === c.owner);
    // CLOSE ALL: also the cursors declared on the transaction's nodes.
    if (name === undefined && (s.txn.phase === 'one' || s.txn.phase === 'cross')) {
      s.sqlCursors.clear();
      await everyTxnNode(s, 'CLOSE ALL');
    }
    return void s.out.push(frames([], name === undefined ? 'CLOSE CURSOR ALL' : 'CLOSE CURSOR'));
  }
  const c = s.sqlCursors.get(name ?? '') as ScatterCursor;
  const f = a.cursor?.fetch;
  if (f === undefined || f.direction !== 'forward' || (f.count !== 'all' && f.count <= 0))
    throw unsupported(
      'a cursor over a read across nodes fetches forward only (FETCH [FORWARD] n, NEXT or ALL)',
    );
  const move = a.command === 'move';
  // The cursor's rows are text (its DECLARE's); a FETCH's Bind may ask for binary (pgx does), and
  // gets it as Postgres gives it: the FETCH's result formats rule, not the cursor's.
  const formats = move ? undefined : new ClientFormats(c.fields, out.formats);
  const w = new Writer(OUT_BATCH_BYTES + 1024);
  if (formats !== undefined && out.rowDescription) writeRowDescription(w, formats.fields);
  const n = await c.fetch(f.count, (values) =>
    formats === undefined ? undefined : row(s, w, formats.unchanged ? values : formats.row(values)),
  );
  writeCommandComplete(w, `${move ? 'MOVE' : 'FETCH'} ${n}`);
  s.out.push(w.flush());
}

/**
 * What a Describe of a FETCH, MOVE or CLOSE of a router cursor answers after its (empty)
 * ParameterDescription: the cursor's RowDescription (a portal's: in its Bind's `resultFormats`),
 * or NoData; undefined when `a` is none.
 */
export function cursorDescription(
  s: Session,
  a: Analysis,
  resultFormats: readonly number[] = [],
): Buffer | undefined {
  if (!onRouterCursor(s, a) || a.kind !== 'utility') return undefined;
  if (a.command !== 'fetch') return NO_DATA;
  const c = s.sqlCursors.get(a.cursor?.name ?? '') as ScatterCursor;
  const fields = new ClientFormats(c.fields, resultFormats).fields;
  return writeRowDescription(new Writer(256), fields).flush();
}

/**
 * A Describe of a portal named like an SQL cursor (psycopg 3 describes its server cursors so): the
 * router's cursor's RowDescription, or the node a one-node cursor was declared on.
 */
export function describeCursorPortal(
  s: Session,
  name: string,
): { frame: Buffer } | { node: string } | undefined {
  const c = s.sqlCursors.get(name);
  if (c === undefined) return undefined;
  if (typeof c === 'string') return { node: c };
  return { frame: writeRowDescription(new Writer(256), (c as ScatterCursor).fields).flush() };
}

function frames(before: readonly Buffer[], tag: string): Buffer {
  const w = new Writer(64);
  for (const b of before) w.bytes(b);
  return writeCommandComplete(w, tag).flush();
}

// ---- where they end ----

/** A portal is closed or bound again: its cursor, if any, closes first. */
export function dropPortal(s: Session, p: RouterPortal | undefined): Promise<void> | undefined {
  if (p === undefined || s.cursors.size === 0) return undefined;
  const owned = (c: OpenCursor): boolean => c.owner === p;
  return [...s.cursors].some(owned) ? closeCursors(s, owned) : undefined;
}

/**
 * What `a` ends, before it runs: COMMIT, ROLLBACK and PREPARE TRANSACTION every cursor of the
 * transaction; ROLLBACK TO those made after its savepoint. Undefined when nothing to close.
 */
export function cursorsEndedBy(s: Session, a: Analysis): Promise<void> | undefined {
  if (s.cursors.size === 0 && s.sqlCursors.size === 0) return undefined;
  if (a.kind !== 'transaction') return undefined;
  switch (a.action) {
    case 'commit':
    case 'prepare_transaction':
      if (s.status() !== 'E') {
        // WITH HOLD cursors live on; the rest go with the transaction.
        for (const c of s.cursors) if (c.hold) c.committed = true;
        return endCursors(s, (c) => !c.hold);
      }
      return endCursors(s, (c) => !c.committed);
    case 'rollback':
      return endCursors(s, (c) => !c.committed);
    case 'rollback_to': {
      const at = s.txn.savepointIndex(a.savepoint ?? '');
      const later = (c: OpenCursor): boolean => c.depth > at && !c.committed;
      if (at < 0 || ![...s.cursors].some(later)) return undefined;
      return closeCursors(s, later);
    }
    default:
      return undefined;
  }
}

/** Cursors `which` picks closed (and their SQL names, with the one-node cursors', forgotten). */
function endCursors(s: Session, which: (c: OpenCursor) => boolean): Promise<void> | undefined {
  for (const [name, c] of s.sqlCursors)
    if (typeof c === 'string' || which(c)) s.sqlCursors.delete(name);
  return [...s.cursors].some(which) ? closeCursors(s, which) : undefined;
}

/** The Sync of an implicit transaction: the portals it fetched in parts close with it. */
export function cursorsEndedBySync(s: Session): Promise<void> | undefined {
  if (s.cursors.size === 0) return undefined;
  return closeCursors(s, (c) => typeof c.owner !== 'string');
}

/** Whether a multi-node portal is being fetched in parts (its next Execute goes on from there). */
export function fetchedInParts(s: Session, p: SeveralPortal): boolean {
  return portalCursor(s, p) !== undefined;
}
