// The backends a session holds, taken and given back: engage() gets the one for a node (held
// already, or from the pool) with what must run there before the client's messages (its settings,
// the deferred BEGIN, or the transaction so far on a node joining it); settle() after an exchange
// tracks the transaction and, in transaction pooling, gives idle backends back.
import { Writer, writeQuery } from '@tessera/pg-wire';
import type { Backend } from '../pool/backend.js';
import type { Pool } from '../pool/pool.js';
import type { Snapshot } from '@tessera/keyspace';
import type { SessionStateChange } from '@tessera/sql';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Expectation } from './exchange.js';
import { run1 } from './run.js';
import type { Session } from '../session/session.js';

/**
 * The node a statement runs on. Inside a transaction, one any node answers (`flexible`) goes to
 * the node the transaction started on; another node joins the transaction (takePrelude).
 * Outside one, it reuses a backend the session holds (session pooling, an open cycle, a pinned
 * one) rather than take another.
 */
export function pickNode(s: Session, node: string, flexible: boolean): string {
  const first = s.txn.first;
  if (first !== undefined) return flexible ? first : node;
  if (flexible && s.held.size > 0) return s.held.keys().next().value!;
  return node;
}

/** A statement that fails on purpose: the node's transaction fails as the client's did. */
export const POISON_SQL =
  "DO $tessera$ BEGIN RAISE EXCEPTION 'statement refused by the router'; END $tessera$";

/**
 * The backend for `node`, held (transaction, session mode, open cycle) or acquired now, with the
 * messages that must precede the client's: settings replay, deferred BEGIN.
 */
export async function engage(
  s: Session,
  node: string,
  catalog: Snapshot,
  begin = true,
): Promise<{ backend: Backend; messages: Buffer[]; expect: Expectation[] }> {
  const messages: Buffer[] = [];
  const expect: Expectation[] = [];
  const backend = await engageInto(s, node, catalog, begin, messages, expect);
  return { backend, messages, expect };
}

/**
 * engage() appending to the caller's `messages` and `expect`; synchronous (no promise, no
 * event-loop turn) when the backend is held already or an idle one is in the pool.
 */
export function engageInto(
  s: Session,
  node: string,
  catalog: Snapshot,
  begin: boolean,
  messages: Buffer[],
  expect: Expectation[],
): Backend | Promise<Backend> {
  return (
    engageNow(s, node, catalog, begin, messages, expect) ??
    acquireInto(s, poolFor(s, catalog, node), node, begin, messages, expect)
  );
}

/**
 * engageInto() without waiting: undefined, having engaged nothing, when the backend would have
 * to be opened or waited for. Throws as engage() does: a node whose part of the transaction was
 * lost, a node joining a transaction whose state cannot be rebuilt there.
 */
export function engageNow(
  s: Session,
  node: string,
  catalog: Snapshot,
  begin: boolean,
  messages: Buffer[],
  expect: Expectation[],
): Backend | undefined {
  let h = s.held.get(node);
  if (h !== undefined && h.backend.dead && s.txn.has(node)) {
    // Its part of the transaction died with it: a fresh backend would run the statement
    // outside the transaction. Failed until the client rolls back.
    lost(s, h.backend);
    throw new RouterError(
      SQLSTATE.connectionFailure,
      `the connection to node "${node}" was lost in the middle of the transaction; roll back`,
    );
  }
  if (h === undefined || h.backend.dead) {
    if (h) drop(s, node);
    const pool = poolFor(s, catalog, node);
    const idle = pool.tryAcquire();
    if (idle === undefined) return undefined;
    h = { backend: idle, pool };
    s.held.set(node, h);
    idle.idleOwner = s.idleOwner;
  }
  prepareBackend(s, h.backend, node, begin, messages, expect);
  return h.backend;
}

async function acquireInto(
  s: Session,
  pool: Pool,
  node: string,
  begin: boolean,
  messages: Buffer[],
  expect: Expectation[],
): Promise<Backend> {
  const backend = await acquireFor(s, pool);
  s.held.set(node, { backend, pool });
  backend.idleOwner = s.idleOwner;
  prepareBackend(s, backend, node, begin, messages, expect);
  return backend;
}

/**
 * A backend of `pool` for session `s`, waited for if the pool is busy. A session that holds
 * backends already (a transaction across nodes, session pooling) waits at most
 * --held-acquire-timeout-ms: sessions that each hold one pool's backends while they wait for
 * another's would otherwise wait for each other until --acquire-timeout-ms. The wait ends when
 * the client goes away; a backend that arrives after that goes straight back.
 */
export async function acquireFor(s: Session, pool: Pool): Promise<Backend> {
  const config = s.services.config;
  const short = config.heldAcquireTimeoutMs < config.acquireTimeoutMs && holdsUnpinned(s);
  const backend = await pool.acquire(
    short ? config.heldAcquireTimeoutMs : config.acquireTimeoutMs,
    s.passThrough,
    { client: s, flag: short ? '--held-acquire-timeout-ms' : '--acquire-timeout-ms' },
  );
  if (s.closed) {
    pool.release(backend);
    throw new RouterError(SQLSTATE.connectionFailure, 'the client went away');
  }
  return backend;
}

/** Whether the session holds a backend that is not pinned out of its pool (acquireFor). */
function holdsUnpinned(s: Session): boolean {
  for (const h of s.held.values()) if (!h.backend.pinnedOut) return true;
  return false;
}

/** Settings replay and the deferred BEGIN, ahead of the client's messages. */
function prepareBackend(
  s: Session,
  backend: Backend,
  node: string,
  begin: boolean,
  messages: Buffer[],
  expect: Expectation[],
): void {
  replaySettings(s, backend, node, messages, expect);
  if (begin) takePrelude(s, node, messages, expect);
}

/**
 * The session's settings on `backend` (for `node`), if it has others, ahead of the client's
 * messages. A node not yet part of the open transaction gets the settings the transaction began
 * with, outside it: the SETs made since are in what it replays inside it (takePrelude), so a
 * ROLLBACK undoes them there too.
 */
export function replaySettings(
  s: Session,
  backend: Backend,
  node: string,
  messages: Buffer[],
  expect: Expectation[],
): void {
  const saved = s.txn.savedAtBegin;
  const outside = saved !== undefined && s.txn.inBlock && !s.txn.has(node);
  const replay = outside
    ? s.settings.replayForSaved(backend.settingsKey, saved)
    : s.settings.replayFor(backend.settingsKey);
  if (replay !== undefined) {
    messages.push(writeQuery(new Writer(replay.length + 16), replay).flush());
    expect.push({ t: 'quiet' });
  }
  backend.settingsKey = outside ? s.settings.keyOf(saved) : s.settings.key();
}

/** The pool for `node`, remembered per catalog snapshot (its key is built once, not per statement). */
export function poolFor(s: Session, catalog: Snapshot, node: string): Pool {
  if (s.poolsCatalog !== catalog) {
    s.poolsCatalog = catalog;
    s.poolsByNode.clear();
  }
  let pool = s.poolsByNode.get(node);
  if (pool === undefined || pool.closed) {
    pool = s.services.pools.pool(catalog, node, s.database, s.user);
    s.poolsByNode.set(node, pool);
  }
  return pool;
}

/** The deferred BEGIN (and what followed it) for the node the transaction now runs on. */
export function takePrelude(
  s: Session,
  node: string,
  messages: Buffer[],
  expect: Expectation[],
): void {
  // Only a node joining an open transaction needs its status (a member's is its own).
  const txn = s.txn;
  const entry = txn.enter(node, txn.phase !== 'deferred' && !txn.has(node) && s.status() === 'E');
  switch (entry.kind) {
    case 'none':
    case 'member':
      return;
    case 'uncertain':
      throw new RouterError(
        SQLSTATE.featureNotSupported,
        `this statement runs on node "${node}", which the transaction has not used yet, and the router cannot rebuild the transaction's state there (a multi-statement query failed midway); roll back, or send statements one by one`,
      );
    case 'join': {
      messages.push(writeQuery(new Writer(entry.sql.length + 16), entry.sql).flush());
      expect.push({ t: 'quiet' });
      // What it replays brings it to the session's settings now.
      const joined = s.held.get(node)?.backend;
      if (joined !== undefined) joined.settingsKey = s.settings.key();
      // The failed state the client saw, if any, must hold on the node too.
      if (entry.poison) {
        messages.push(writeQuery(new Writer(128), POISON_SQL).flush());
        expect.push({ t: 'quiet' });
      }
      return;
    }
  }
}

/** After an exchange: track the transaction and give backends back to their pools. */
export function settle(s: Session, node: string): void {
  const h = s.held.get(node);
  if (!h) return;
  const b = h.backend;
  if (b.dead) {
    lost(s, b);
    return;
  }
  s.txn.settled(node, b.status, s.saveSettings);
  if (
    b.status === 'I' &&
    s.services.config.poolMode === 'transaction' &&
    s.cycle === undefined &&
    !s.pinned.has(node)
  ) {
    s.held.delete(node);
    h.pool.release(b);
  }
}

/**
 * Records the session state a statement that succeeded on `node` left or cleared there
 * (session/pins.ts): a backend that now holds some leaves its pool's count and stays with the
 * session; one whose state is all gone counts in its pool again (settle() gives it back).
 */
export function applyState(s: Session, node: string, change: SessionStateChange): void {
  const { before, after } = s.pinned.apply(node, change);
  // One lock or channel of several released: whether any is left is asked (session/unpin.ts).
  if (after && change.mayClear?.some((k) => s.pinned.holds(node, k)))
    (s.unpinProbes ??= new Set()).add(node);
  const h = s.held.get(node);
  if (h === undefined || before === after) return;
  if (after) h.pool.pinOut(h.backend);
  else h.pool.pinBack(h.backend);
}

/** A backend died under us: forget it; a transaction on it is lost (the client must roll back). */
export function lost(s: Session, b: Backend): void {
  for (const [node, h] of s.held) {
    if (h.backend !== b) continue;
    drop(s, node);
    // Its part of the transaction is gone: failed until the client rolls back.
    s.txn.lost(node);
  }
}

/** Closes and forgets the backend held for `node` (left mid-transaction by a failed fan-out). */
export function drop(s: Session, node: string): void {
  const h = s.held.get(node);
  if (!h) return;
  s.held.delete(node);
  s.pinned.forget(node);
  if (!h.backend.dead) h.backend.destroy('dropped by its session');
  h.pool.release(h.backend);
}

/** Puts the transaction on `node` into the failed state without a visible error. */
export async function poison(s: Session, node: string): Promise<void> {
  const h = s.held.get(node);
  if (!h || h.backend.status === 'E') return;
  await run1(s, h.backend, [writeQuery(new Writer(128), POISON_SQL).flush()], [{ t: 'quiet' }]);
}

/** A statement was refused or failed in the router: the transaction, if any, fails as in Postgres. */
export async function failTransaction(s: Session): Promise<void> {
  const node = s.txn.failed();
  if (node !== undefined) await poison(s, node);
}
