// The extended query protocol: a batch of Parse/Bind/Describe/Execute/Close up to a Sync (or a
// Flush) becomes one round to one node (execute/round.ts). Statements are kept per client and
// prepared lazily, under a router name, on whichever backend runs them; each Bind is admitted
// (protocol/admission.ts) and executed (execute/executor.ts): one node's statements join the
// round, the router's own portals run at their Execute under the snapshot their Bind had. The
// shape drivers send most (Bind, [Describe,] Execute, Sync) takes this same path, synchronously
// (no promise) until the round is sent, and a read of that shape may share a lane.
import { BIND_COMPLETE, FrontendCode, rewriteBindStatement, decodeExecute } from '@tessera/pg-wire';
import { NO_SESSION_STATE, type Analysis, type SessionStateChange } from '@tessera/sql';
import { typedParams } from '../routing/key-hash.js';
import type { Routed } from '../admit/decision.js';
import type { Epoch } from '../catalog/epochs.js';
import type { Effect, SessionCommand } from '../commands/plan.js';
import { runCommand } from '../commands/run-command.js';
import { acquire, acquisition, pipelinableRead } from '../execute/acquire.js';
import { pickNode, takePrelude } from '../execute/backends.js';
import { EXPECT_EXECUTE, EXPECT_ONE, EXPECT_SYNC } from '../execute/exchange.js';
import { execute, type BindVia } from '../execute/executor.js';
import { Round, sendRound } from '../execute/round.js';
import type { Backend } from '../pool/backend.js';
import { cursorsEndedBySync, dropPortal } from '../scatter/cursor-wire.js';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import type { RouterPortal } from '../statement/portal.js';
import type { StatementRecord } from '../statement/prepared.js';
import { isSingleRun, prepareOn, statementNamed } from '../statement/prepared.js';
import type { Statement } from '../statement/statement.js';
import { filledRecord, prefillBatch, type Prefilled } from '../sequences/prefill.js';
import { noteDdl } from '../session/names.js';
import { executeAsBind } from '../statement/sql-prepared.js';
import { admitted } from './admission.js';
import { closeOpenCycle, cycleNotNeeded, openCycleBackend } from './cycle.js';
import { describe, type Batch } from './describe.js';
import { preferredNode } from './lookahead.js';
import { bindEmpty, close, parse } from './messages.js';
import { checkLocalInPipeline, newPortalName, refuse, severalPortal } from './portals.js';
import { queueSingleRunTail } from './single-run.js';
import { runRouterPortal } from './router-portal.js';
import { Answered, beforeLocal, crossOver, finishCrossed, type CrossingBatch } from './crossing.js';

type SeveralPortal = RouterPortal & { kind: 'several' };

/** `failed`: the batch is the Sync ending a batch that failed (the messages between were skipped). */
export function handleBatch(
  s: Session,
  batch: readonly InMsg[],
  failed = false,
): Promise<void> | undefined {
  return new BatchRun(s, batch, failed).run();
}

/** One batch's run; it is also the executor's view of its Binds (BindVia). */
class BatchRun implements Batch, BindVia, CrossingBatch {
  readonly kind = 'bind';
  round = new Round();
  /** Its statements run on several nodes, in a transaction (crossing.ts). */
  crossed: boolean;
  readonly endsWithSync: boolean;
  /** The message being handled, by index. */
  at = 0;
  /** Effects and pins of Binds on a node, applied if their Execute succeeds. */
  private afterRun:
    Map<string, { effect: Effect | undefined; state: SessionStateChange }> | undefined;
  private preferred: string | null | undefined;
  // The Bind being executed (BindVia).
  private bind!: InMsg;
  private rec!: StatementRecord;
  private portalName = '';
  private prefilled: Prefilled | undefined;
  private filled = false;
  laneName: string | undefined;

  constructor(
    readonly s: Session,
    readonly batch: readonly InMsg[],
    private failedHere: boolean,
  ) {
    this.endsWithSync = batch[batch.length - 1]!.code === FrontendCode.Sync;
    // A batch ended by a Flush left its transaction across nodes open: this one goes on in it.
    this.crossed = s.txn.implicit;
    // A cycle left open at a Flush continues on its backend (cycle.ts).
    const open = openCycleBackend(s);
    if (open !== undefined) {
      this.round.node = s.cycle;
      this.round.backend = open;
      this.round.policy = 'held';
    }
  }

  run(): Promise<void> | undefined {
    const pre = prefillBatch(this.s, this.batch);
    if (pre instanceof Promise) return pre.then((m) => this.start(m));
    return this.start(pre);
  }

  private start(prefilled: Prefilled | undefined): Promise<void> | undefined {
    this.prefilled = prefilled;
    const { round, s } = this;
    if (cycleNotNeeded(s, round, this.batch, () => this.preferredNode())) {
      const backend = round.backend!;
      round.node = round.backend = round.policy = undefined;
      return closeOpenCycle(s, backend).then(() => this.loop() ?? undefined);
    }
    return this.loop();
  }

  /** Steps through the messages; a promise only from the first step that has to wait. */
  private loop(): Promise<void> | undefined {
    const n = this.batch.length;
    try {
      for (; this.at < n; this.at++) {
        const pending = this.step(this.batch[this.at]!);
        if (pending !== undefined) return this.loopAfter(pending);
      }
    } catch (e) {
      return this.failed(e);
    }
    return this.finish();
  }

  private async loopAfter(pending: Promise<void>): Promise<void> {
    try {
      await pending;
      for (this.at++; this.at < this.batch.length; this.at++) {
        const next = this.step(this.batch[this.at]!);
        if (next !== undefined) await next;
      }
    } catch (e) {
      return this.failed(e);
    }
    return this.finish();
  }

  private step(m: InMsg): Promise<void> | undefined {
    switch (m.code) {
      case FrontendCode.Parse:
        return parse(this.s, m, this.synth);
      case FrontendCode.Bind:
        return this.bindMessage(m);
      case FrontendCode.Describe:
        return describe(this, m, this.batch[this.at + 1]);
      case FrontendCode.Execute:
        return this.executeMessage(m);
      case FrontendCode.Close:
        return close(this.s, m, this.round, this.synth, dropPortal);
      case FrontendCode.Flush:
        if (this.round.backend !== undefined) this.round.messages.push(m.raw);
        return;
      case FrontendCode.Sync:
        // A batch across nodes ends its rounds and its transaction in finish().
        if (this.crossed) return;
        if (this.round.backend === undefined) this.s.out.push(this.s.readyFrame());
        else {
          this.round.messages.push(m.raw);
          this.round.expect.push(EXPECT_SYNC);
        }
        return;
    }
  }

  /** Frames the router answers itself, in their place among the node's answers. */
  readonly synth = (b: Buffer): void => {
    if (this.round.backend !== undefined) this.round.expect.push({ t: 'synthetic', bytes: b });
    else this.s.out.push(b);
  };

  private bindMessage(m: InMsg): Promise<void> | undefined {
    const s = this.s;
    const rec = statementNamed(s.statements, s.bindNames.of(m.body));
    const portal = newPortalName(s, m.body);
    const closing = dropPortal(s, s.portals.get(portal));
    if (closing !== undefined) return closing.then(() => this.bindMessage(m));
    if (s.portals.size > 0) s.portals.delete(portal);
    this.afterRun?.delete(portal);
    const a = rec.analysis;
    if (a === undefined) return bindEmpty(this, m, rec);
    if (a.kind === 'execute')
      return executeAsBind(s, m, portal, a, this.round.backend !== undefined, (e) => {
        this.filled = e.filled;
        return this.admitBind(e.bind, e.rec, portal, e.rec.analysis!);
      });
    noteDdl(s, [a]);
    const own = filledRecord(s, this.prefilled?.get(this.at), rec);
    this.filled = own !== undefined;
    return this.admitBind(m, own ?? rec, portal, own?.analysis ?? a);
  }

  private admitBind(
    m: InMsg,
    rec: StatementRecord,
    portal: string,
    a: Analysis,
  ): Promise<void> | undefined {
    const s = this.s;
    const stmt: Statement = {
      analysis: a,
      params: typedParams(m.body, rec.paramTypes),
      protocol: 'extended',
      purpose: 'run',
    };
    const d = admitted(s, stmt);
    if (d instanceof Promise) return d.then((x) => this.bound(m, rec, portal, stmt, x));
    return this.bound(m, rec, portal, stmt, d);
  }

  private bound(
    m: InMsg,
    rec: StatementRecord,
    portal: string,
    stmt: Statement,
    d: Awaited<ReturnType<typeof admitted>>,
  ): Promise<void> | undefined {
    const s = this.s;
    switch (d.kind) {
      case 'refused':
        throw d.error;
      case 'held':
        throw new Error('a held statement came back held');
      case 'local': {
        const before = beforeLocal(this, d.command);
        if (before !== undefined) return before.then(() => this.local(portal, d.command));
        return this.local(portal, d.command);
      }
      case 'routed':
        this.bind = m;
        this.rec = rec;
        this.portalName = portal;
        this.laneName =
          s.txn.phase === 'idle' && isSingleRun(this.batch) && pipelinableRead(stmt.analysis)
            ? rec.serverName(s.settings.key())
            : undefined;
        return this.ran(execute(s, stmt, d, this));
    }
  }

  /** A session command the router answers at its Execute. */
  private local(portal: string, command: SessionCommand): undefined {
    checkLocalInPipeline(this.s, command, this.round);
    this.s.portals.set(portal, { kind: 'local', command });
    this.synth(BIND_COMPLETE);
    return undefined;
  }

  /** A Bind on the round's node in the shape drivers send: the rest of the batch goes at once. */
  private ran(pending: Promise<void> | undefined): Promise<void> | undefined {
    if (pending !== undefined || this.at !== 0 || this.bind !== this.batch[0]) return pending;
    if (this.afterRun === undefined && queueSingleRunTail(this.s, this.batch, this.round))
      this.at = this.batch.length - 1;
    return undefined;
  }

  // ---- BindVia: what the executor asks of a Bind ----

  nodeFor(target: string, flexible: boolean): string {
    const s = this.s;
    // Statements any node answers go where the batch's first pinned statement goes.
    if (flexible && s.txn.first === undefined) target = this.preferredNode() ?? target;
    const round = this.round;
    if (round.backend === undefined) return pickNode(s, target, flexible);
    return flexible ? round.node! : target;
  }

  roundFor(node: string): Round | Promise<Round> {
    const round = this.round;
    if (round.backend === undefined || round.node === node) return round;
    return crossOver(this)!.then(() => this.round);
  }

  push(round: Round, effect: Effect | undefined, state: SessionStateChange): void {
    const b = round.backend!;
    const key = this.s.settings.key();
    let name: string;
    if (round.policy === 'lane') {
      name = this.laneName!;
      if (!b.prepared.has(name)) {
        // Nobody else uses the name on this backend until its Parse is answered (Pool.lend).
        round.messages.push(this.rec.parseFrame(name));
        round.expect.push({ t: 'one', forward: false, unprepare: name });
        b.prepared.add(name);
        b.parsing.add(name);
        round.parsing = name;
      }
    } else {
      name = prepareOn(b, this.rec, key, round.messages, round.expect);
    }
    const m = this.bind;
    round.messages.push(name === '' && !this.filled ? m.raw : rewriteBindStatement(m.body, name));
    round.expect.push(EXPECT_ONE);
    if (effect !== undefined || state !== NO_SESSION_STATE)
      (this.afterRun ??= new Map()).set(this.portalName, { effect, state });
  }

  keep(portal: SeveralPortal): void {
    this.s.portals.set(this.portalName, portal);
    this.synth(BIND_COMPLETE);
  }

  portal(d: Routed<Epoch>): SeveralPortal {
    return severalPortal(this.rec, this.bind, d);
  }

  /** Batch (Describe asks): the node the batch's first pinned Bind goes to (undefined: none). */
  preferredNode(): string | undefined {
    if (this.preferred === undefined)
      this.preferred =
        preferredNode(this.s, this.batch, this.at, (k) => this.prefilled?.get(k)) ?? null;
    return this.preferred ?? undefined;
  }

  /** The round's backend for `node`, taken if it has none yet (`begin`: the deferred BEGIN first). */
  backendFor(node: string, begin: boolean): Backend | Promise<Backend> {
    const { s, round } = this;
    if (round.backend !== undefined) {
      if (begin) takePrelude(s, round.node!, round.messages, round.expect);
      return round.backend;
    }
    const snapshot = s.epoch().snapshot;
    return acquire(s, round, node, snapshot, acquisition(s, node, undefined), begin, undefined);
  }

  private executeMessage(m: InMsg): Promise<void> | undefined {
    const s = this.s;
    // Only a portal the router runs itself (or one with effects) needs the Execute decoded.
    const ex =
      s.portals.size > 0 || this.afterRun !== undefined ? decodeExecute(m.body) : undefined;
    const p = ex === undefined ? undefined : s.portals.get(ex.portal);
    if (p === undefined) return this.forwardExecute(m, ex?.portal);
    if (p.kind === 'local') return runCommand(s, p.command, this.synth);
    return runRouterPortal(this, p, ex!.maxRows);
  }

  private forwardExecute(m: InMsg, portal: string | undefined): Promise<void> | undefined {
    const got = this.backendFor(this.nodeFor(this.s.epoch().snapshot.home, true), true);
    // No closure unless the backend has to be waited for: this runs for every statement.
    if (got instanceof Promise) return got.then(() => this.queueExecute(m, portal));
    this.queueExecute(m, portal);
    return undefined;
  }

  private queueExecute(m: InMsg, portal: string | undefined): void {
    const round = this.round;
    const after = portal === undefined ? undefined : this.afterRun?.get(portal);
    if (after !== undefined) {
      if (after.effect !== undefined) round.after(round.expect.length, after.effect);
      if (after.state !== NO_SESSION_STATE)
        round.after(round.expect.length, { kind: 'state', change: after.state });
    }
    round.messages.push(m.raw);
    round.expect.push(EXPECT_EXECUTE);
  }

  /** An error the router raised: answered in place; the rest of the batch is skipped. */
  private async failed(e: unknown): Promise<void> {
    const s = this.s;
    if (s.closed) return;
    if (!(e instanceof Answered)) await refuse(s, e, this.round, this.synth);
    if (this.crossed) {
      this.failedHere = true;
      return this.finish();
    }
    // Everything up to the Sync is skipped, as Postgres does after an error.
    if (!this.endsWithSync) s.skipUntilSync = true;
    else if (this.round.backend === undefined) s.out.push(s.readyFrame());
    else {
      this.round.messages.push(this.batch[this.batch.length - 1]!.raw);
      this.round.expect.push(EXPECT_SYNC);
    }
    return this.finish();
  }

  /** Sends the round (if anything is for a node), then ends the batch. */
  private finish(): Promise<void> | undefined {
    const { s, round } = this;
    if (this.crossed)
      return finishCrossed(this, this.endsWithSync, this.failedHere).then(() => this.ended());
    if (round.backend === undefined || round.messages.length === 0) return this.ended();
    return sendRound(s, round, !this.endsWithSync).then(
      () => this.ended(),
      (e: unknown) => {
        s.sendError(e);
        if (this.endsWithSync) s.out.push(s.readyFrame());
        else s.skipUntilSync = true;
        this.ended();
      },
    );
  }

  private ended(): Promise<void> | undefined {
    const s = this.s;
    s.out.flush();
    // Outside a transaction block a Sync ends the implicit transaction, and its portals.
    if (!this.endsWithSync || s.inTransaction()) return undefined;
    s.portals.clear();
    return cursorsEndedBySync(s);
  }
}
