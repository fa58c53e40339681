// A read across nodes fetched in parts: an extended-protocol portal executed with a row limit
// (pg-cursor, JDBC fetchSize, asyncpg cursors), or an SQL cursor declared over it (DECLARE ...
// CURSOR FOR, then FETCH / MOVE / CLOSE). Each node's leaf is a named portal read a page at a time
// (leaves.ts, leaf-run.ts); the merge keeps its place between fetches, so nothing holds more than
// a few pages per node, and between fetches the nodes' backends are free for the session's other
// statements. Forward only. It lives until its portal or SQL name goes, or its transaction ends.
import {
  executeReadPlan,
  leafResultFormats,
  type FieldDescription,
  type ResultMessage,
  type Row,
} from '@tessera/merge';
import type { Analysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { unsupported } from '../errors.js';
import type { ScatterRoute } from '../routing/route-types.js';
import type { OpenCursor, Session } from '../session/session.js';
import type { BindValues } from '../statement/portal.js';
import type { LeafRun } from './leaf-run.js';
import { executorParams } from './formats.js';
import { finishLeaves, startLeaves } from './leaves.js';
import { applyState } from '../execute/backends.js';
import { boundTime, planScatter, scatterError } from './scatter.js';

export interface CursorRequest {
  /** The SELECT the cursor reads. */
  readonly select: Analysis;
  readonly bind?: BindValues | undefined;
  /** The snapshot its statement was admitted and routed by. */
  readonly snapshot: Snapshot;
  /** Who holds it: its portal, or its SQL name. */
  readonly owner: object | string;
  /**
   * DECLARE ... WITH HOLD: each node's part is a WITH HOLD cursor on that node (materialized there
   * when its transaction commits), its backend pinned to the session until the cursor closes.
   */
  readonly hold?: boolean;
}

export class ScatterCursor implements OpenCursor {
  /** The columns of its rows (the merge's RowDescription). */
  fields: readonly FieldDescription[] = [];
  readonly hold: boolean;
  /** A WITH HOLD cursor whose transaction committed (or that was declared outside one). */
  committed: boolean;
  private done = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly s: Session,
    private readonly r: ScatterRoute,
    private readonly req: CursorRequest,
    private readonly nodes: readonly string[],
    private readonly leaves: readonly LeafRun[],
    private readonly results: AsyncGenerator<ResultMessage, void, undefined>,
    /** The transaction's savepoints when it opened: a ROLLBACK TO one of them closes it. */
    readonly depth: number,
  ) {
    this.hold = req.hold === true;
    this.committed = this.hold && !s.txn.inBlock;
  }

  get owner(): object | string {
    return this.req.owner;
  }

  /** Plans the read and starts every node's portal; the cursor knows its columns when this resolves. */
  static async open(s: Session, r: ScatterRoute, req: CursorRequest): Promise<ScatterCursor> {
    const { plan, explain } = await planScatter(s, r, req.select, req.snapshot);
    if (explain !== undefined)
      throw unsupported('EXPLAIN fetched in parts across nodes is not supported');
    const bound = await boundTime(s, r, plan, req.snapshot);
    const resultFormats = req.bind?.resultFormats ?? [];
    const engaged: string[] = [];
    const leaves: LeafRun[] = [];
    try {
      const formats = leafResultFormats(bound, resultFormats);
      await startLeaves(s, r, bound, req, engaged, leaves, formats, req.hold ? 'held' : 'portal');
    } catch (e) {
      await finishLeaves(s, engaged, leaves);
      throw e;
    }
    // Its nodes' backends stay with the session while their WITH HOLD cursors exist.
    if (req.hold === true) pin(s, engaged, leaves, true);
    const params = req.bind === undefined ? [] : executorParams(bound, req.bind);
    const results = executeReadPlan(bound, leaves, { params, resultFormats });
    const depth = s.txn.savepointCount;
    const c = new ScatterCursor(s, r, req, engaged, leaves, results, depth);
    s.cursors.add(c);
    await c.pull(async (m) => {
      if (m.kind === 'RowDescription') c.fields = m.fields;
      return m.kind === 'RowDescription';
    });
    return c;
  }

  /** All rows were fetched (or it was closed). */
  get finished(): boolean {
    return this.done;
  }

  /**
   * Hands up to `max` rows (`all`: every one left) to `row`; how many it handed. Fewer than asked
   * means the end was reached. An error closes the cursor and is thrown as the client gets it.
   */
  async fetch(max: number | 'all', row: (values: Row) => void | Promise<void>): Promise<number> {
    let n = 0;
    if (max !== 'all' && max <= 0) return 0;
    await this.pull(async (m) => {
      if (m.kind === 'CommandComplete') this.done = true;
      if (m.kind !== 'DataRow') return this.done;
      await row(m.values);
      return ++n === max;
    });
    return n;
  }

  /** Reads the merge's messages until `each` says stop or it ends; errors close the cursor. */
  private async pull(each: (m: ResultMessage) => Promise<boolean>): Promise<void> {
    try {
      while (!this.done) {
        const next = await this.results.next();
        if (next.done === true) {
          this.done = true;
          break;
        }
        if (await each(next.value)) break;
      }
    } catch (e) {
      await this.close();
      throw await scatterError(this.s, this.r, e, this.req.select.sql, this.req);
    }
    if (this.done) await this.close();
  }

  /** Stops every node's portal and gives the backends back as a finished read does. Idempotent. */
  close(): Promise<void> {
    this.done = true;
    this.closing ??= (async () => {
      this.s.cursors.delete(this);
      await this.results.return(undefined);
      const unpin = (): void => pin(this.s, this.nodes, this.leaves, false);
      await finishLeaves(this.s, this.nodes, this.leaves, true, this.hold ? unpin : undefined);
    })();
    return this.closing;
  }

  /** The session is gone: the backends mid-portal are closed, never reused. */
  destroy(): void {
    this.done = true;
    for (const l of this.leaves)
      l.backend.destroy('the cursor was left open by a client that went away');
  }
}

/** Pins (or unpins) the backends of a WITH HOLD cursor's nodes to the session (session/pins.ts). */
function pin(s: Session, nodes: readonly string[], leaves: readonly LeafRun[], on: boolean): void {
  for (const [i, node] of nodes.entries()) {
    const portal = leaves[i]?.paging?.portal;
    if (portal === undefined) continue;
    applyState(s, node, {
      creates: on ? ['hold_cursor'] : [],
      clears: [],
      declares: on ? portal : undefined,
      closes: on ? undefined : portal,
      homeOnly: false,
    });
  }
}

/** Closes the session's cursors that `which` picks (all by default), before what ends them runs. */
export async function closeCursors(
  s: Session,
  which: (c: OpenCursor) => boolean = () => true,
): Promise<void> {
  const closing = [...s.cursors].filter(which);
  for (const c of closing) {
    if (typeof c.owner === 'string' && s.sqlCursors.get(c.owner) === c)
      s.sqlCursors.delete(c.owner);
    await c.close();
  }
}
