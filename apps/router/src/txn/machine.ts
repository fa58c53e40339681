// One client's transaction as a pure state machine: idle, BEGIN deferred to the first statement
// (no node yet), open on one node, open across nodes, failed, broken (a node's part was lost).
// The session feeds it what happened (a statement is about to run on a node, a backend reported
// its status, a part was lost, the transaction ended) and does what it answers: the SQL that
// makes a node part of the transaction, the node to put into the failed state, the settings to
// restore. No I/O and no sockets: machine.test.ts drives it with tables of events.
import type { TransactionStatus } from '@tessera/pg-wire';

import type { Entry, PartStatus, Savepoint, Settled, TxnPart, TxnPhase } from './types.js';

export type { Entry, PartStatus, Settled, TxnPart, TxnPhase } from './types.js';

const NONE: Entry = Object.freeze({ kind: 'none' });
const MEMBER: Entry = Object.freeze({ kind: 'member' });
const UNCERTAIN: Entry = Object.freeze({ kind: 'uncertain' });

/** `S`: the session's saved settings, opaque here (restored when the transaction rolls back). */
export class TxnMachine<S> {
  /**
   * now() of the transaction as a timestamptz literal, asked of its first node by the first read
   * across nodes that needs it (scatter/scatter.ts boundTime); cleared when it ends.
   */
  time: string | undefined = undefined;
  #phase: 'idle' | 'deferred' | 'open' = 'idle';
  /** A statement failed before a node held the transaction: failed until ROLLBACK (TO). */
  #deferredFailed = false;
  /** BEGIN and what followed it while no node holds the transaction. */
  #prelude: string[] = [];
  readonly #parts = new Map<string, TxnPart>();
  #touched = 0;
  /** BEGIN ... and every transaction-scoped statement after it: what a joining node replays. */
  #replay: string[] = [];
  #broken = false;
  #replayUncertain = false;
  #atBegin: S | undefined;
  #savepoints: Savepoint<S>[] = [];
  #implicit = false;

  get phase(): TxnPhase {
    if (this.#phase !== 'open') return this.#phase;
    return this.#parts.size > 1 || this.#broken ? 'cross' : 'one';
  }

  /** In a transaction block (deferred or open). */
  get inBlock(): boolean {
    return this.#phase !== 'idle';
  }

  /** The status the client should see, from each part's backend (`live`) once open. */
  status(live: (node: string) => PartStatus | undefined): TransactionStatus {
    switch (this.#phase) {
      case 'idle':
        return 'I';
      case 'deferred':
        return this.#deferredFailed ? 'E' : 'T';
      case 'open': {
        // Failed on one node = failed for the client, as one Postgres would be.
        if (this.#broken) return 'E';
        let idle = true;
        for (const node of this.#parts.keys()) {
          const s = live(node);
          if (s === undefined) continue;
          if (s === 'E' || s === 'lost') return 'E';
          if (s !== 'I') idle = false;
        }
        return idle ? 'I' : 'T';
      }
    }
  }

  /** The node the transaction started on: statements any node can answer go there. */
  get first(): string | undefined {
    // Asked for every statement: most have no part yet, and need no iterator to say so.
    if (this.#parts.size === 0) return undefined;
    for (const node of this.#parts.keys()) return node;
    return undefined;
  }

  has(node: string): boolean {
    return this.#parts.has(node);
  }

  /** The epoch the part on `node` first wrote under, if it wrote (admit/hold.ts). */
  firstWriteEpoch(node: string): bigint | undefined {
    return this.#parts.get(node)?.firstWriteEpoch;
  }

  /** The parts, in the order their nodes joined. */
  parts(): IterableIterator<[string, TxnPart]> {
    return this.#parts.entries();
  }

  get partCount(): number {
    return this.#parts.size;
  }

  /** A part was lost: only ROLLBACK (or COMMIT, which rolls back) ends the transaction. */
  get broken(): boolean {
    return this.#broken;
  }

  /** The BEGIN the transaction started with (COMMIT AND CHAIN begins the next one alike). */
  get beginSql(): string {
    return (this.#phase === 'deferred' ? this.#prelude[0] : this.#replay[0]) ?? 'BEGIN';
  }

  /** The settings the transaction began with (restored if it rolls back). */
  get savedAtBegin(): S | undefined {
    return this.#atBegin;
  }

  /** What a deferred transaction runs on its node first: BEGIN and the statements after it. */
  get prelude(): readonly string[] {
    return this.#prelude;
  }

  // ---- beginning ----

  /**
   * The transaction is the implicit one of an extended-protocol batch whose statements run on
   * several nodes (beginImplicit), not the client's: the batch's Sync ends it.
   */
  get implicit(): boolean {
    return this.#implicit;
  }

  /** A batch crosses nodes outside a transaction block: its implicit transaction, begun like BEGIN. */
  beginImplicit(settings: S): void {
    if (this.begin('BEGIN', settings)) this.#implicit = true;
  }

  /** BEGIN outside a transaction: deferred until a statement picks a node. False when in one. */
  begin(sql: string, settings: S): boolean {
    if (this.#phase !== 'idle') return false;
    this.#phase = 'deferred';
    this.#prelude = [sql];
    this.#atBegin = settings;
    return true;
  }

  /** A transaction-scoped statement while deferred (SET, SAVEPOINT...): run first on the node. */
  defer(sql: string): void {
    if (this.#phase === 'deferred') this.#prelude.push(sql);
  }

  /**
   * A statement is about to run on `node`: what must run there first. Joining happens now (the
   * caller sends the SQL ahead of the statement, in the same write). `failed`: the client sees
   * the open transaction failed (status E), so a joining node must fail its part too.
   */
  enter(node: string, failed: boolean): Entry {
    switch (this.#phase) {
      case 'idle':
        return NONE;
      case 'open': {
        if (this.#parts.has(node)) return MEMBER;
        // A node joining: BEGIN (same options) and the savepoints and SETs so far, in order, so
        // a later ROLLBACK TO or RELEASE means the same on every node.
        if (this.#replayUncertain) return UNCERTAIN;
        const poison = failed;
        this.#join(node);
        return { kind: 'join', sql: this.#replay.join('; '), poison };
      }
      case 'deferred': {
        const sql = this.#prelude.join('; ');
        const poison = this.#deferredFailed;
        this.#phase = 'open';
        this.#replay = this.#prelude;
        this.#prelude = [];
        this.#deferredFailed = false;
        this.#join(node);
        return { kind: 'join', sql, poison };
      }
    }
  }

  #join(node: string): void {
    if (!this.#parts.has(node))
      this.#parts.set(node, { written: false, firstWriteEpoch: undefined, touched: false });
  }

  // ---- what runs ----

  /**
   * A statement that may write (`write`) was sent to `node` under catalog `epoch`; `touches`:
   * it names a table (false for SHOW, `SELECT 1`, SET ...).
   */
  wrote(node: string, write: boolean, epoch?: bigint, touches = true): void {
    const part = this.#parts.get(node);
    if (part === undefined) return;
    if (touches && !part.touched) {
      part.touched = true;
      this.#touched++;
    }
    if (!write) return;
    part.written = true;
    part.firstWriteEpoch ??= epoch;
  }

  /** Whether a statement naming a table ran on `node` in this transaction. */
  touched(node: string): boolean {
    return this.#parts.get(node)?.touched ?? false;
  }

  /** How many parts ran a statement naming a table. */
  get touchedCount(): number {
    return this.#touched;
  }

  /** Whether the part on `node` was written (a multi-statement text sets it outright). */
  setWritten(node: string, written: boolean): void {
    const part = this.#parts.get(node);
    if (part !== undefined) part.written = written;
  }

  /** A transaction-scoped statement ran on the open transaction: a later node replays it. */
  replayed(sql: string): void {
    if (this.#phase === 'open') this.#replay.push(sql);
  }

  /** A multi-statement text's BEGIN/COMMIT/ROLLBACK and savepoints, applied to the replay log. */
  replaceReplay(replay: string[]): void {
    this.#replay = replay;
  }

  get replayLog(): readonly string[] {
    return this.#replay;
  }

  /** Which of a multi-statement text's statements ran is unknown: no node may join later. */
  markUncertain(): void {
    if (this.#phase === 'open') this.#replayUncertain = true;
  }

  /**
   * A backend that ran a statement for the session reported `status`. `settings`: the session's
   * settings now, asked for only if the client's own text began a transaction.
   */
  settled(node: string, status: PartStatus, settings: () => S): Settled {
    if (status === 'lost') {
      this.lost(node);
      return this.#broken ? 'broke' : 'none';
    }
    if (status === 'I') {
      if (this.#phase !== 'open' || !this.#parts.has(node)) return 'none';
      if (this.#parts.size === 1 && !this.#broken) {
        this.#reset();
        return 'ended';
      }
      if (this.#parts.get(node)?.touched === true) this.#touched--;
      this.#parts.delete(node);
      this.#broken = true;
      return 'broke';
    }
    if (this.#phase !== 'open') {
      // Begun by the client's own text (BEGIN inside a multi-statement query).
      this.#reset();
      this.#phase = 'open';
      this.#replay = ['BEGIN'];
      this.#atBegin = settings();
      this.#join(node);
      this.wrote(node, true);
      return 'began';
    }
    if (this.#parts.has(node)) return 'none';
    this.#join(node);
    this.wrote(node, true);
    return 'joined';
  }

  /** `node`'s part was lost with its connection: failed for good (ROLLBACK TO cannot help). */
  lost(node: string): void {
    const part = this.#parts.get(node);
    if (this.#phase !== 'open' || part === undefined) return;
    this.#parts.delete(node);
    if (part.touched) this.#touched--;
    this.#broken = true;
  }

  /**
   * A statement was refused or failed in the router: the transaction fails as in Postgres. The
   * node to put into the failed state, if one holds the transaction.
   */
  failed(): string | undefined {
    if (this.#phase === 'deferred') this.#deferredFailed = true;
    return this.#phase === 'open' ? this.first : undefined;
  }

  // ---- savepoints ----

  savepoint(name: string, settings: S): void {
    this.#savepoints.push({ name, settings });
  }

  /** RELEASE: false when no savepoint has that name (the caller raises 3B001). */
  release(name: string): boolean {
    const i = this.#savepointIndex(name);
    if (i < 0) return false;
    this.#savepoints.length = i;
    return true;
  }

  /**
   * ROLLBACK TO: the settings as they were at the savepoint (later savepoints are gone, this one
   * stays); undefined when no savepoint has that name. A deferred transaction is no longer failed.
   */
  rollbackTo(name: string): { settings: S } | undefined {
    const i = this.#savepointIndex(name);
    if (i < 0) return undefined;
    this.#savepoints.length = i + 1;
    if (this.#phase === 'deferred') this.#deferredFailed = false;
    return { settings: this.#savepoints[i]!.settings };
  }

  /** How many savepoints are open. */
  get savepointCount(): number {
    return this.#savepoints.length;
  }

  /** The position of the latest savepoint named `name` (-1: none). */
  savepointIndex(name: string): number {
    return this.#savepointIndex(name);
  }

  #savepointIndex(name: string): number {
    for (let i = this.#savepoints.length - 1; i >= 0; i--)
      if (this.#savepoints[i]!.name === name) return i;
    return -1;
  }

  // ---- the end ----

  /** The transaction is over (committed or rolled back): the settings it began with. */
  end(): S | undefined {
    const atBegin = this.#atBegin;
    this.#reset();
    return atBegin;
  }

  /** After COMMIT/ROLLBACK AND CHAIN answered by the router: a new deferred transaction. */
  chain(beginSql: string, settings: S): void {
    this.#reset();
    this.begin(beginSql, settings);
  }

  /** COMMIT/ROLLBACK AND CHAIN ran on the one node: its part goes on as a new transaction. */
  chainedOnNode(settings: S): void {
    this.#replay = this.#replay.slice(0, 1);
    this.#savepoints = [];
    this.#atBegin = settings;
    this.time = undefined;
    for (const part of this.#parts.values()) {
      part.written = false;
      part.firstWriteEpoch = undefined;
    }
  }

  #reset(): void {
    this.#phase = 'idle';
    this.#deferredFailed = false;
    this.#prelude = [];
    this.#parts.clear();
    this.#touched = 0;
    this.#replay = [];
    this.#broken = false;
    this.#replayUncertain = false;
    this.#atBegin = undefined;
    this.#savepoints = [];
    this.time = undefined;
    this.#implicit = false;
  }
}
