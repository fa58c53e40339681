// One round of messages to one node, assembled statement by statement (a simple Query, or an
// extended-protocol batch up to its Sync or Flush) and sent in one write: the one single-node
// send of both protocols. What the router records once it ran (session-command effects, a pinned
// backend) is applied here, and the epochs of its statements are left when it is over.
import type { Epoch } from '../catalog/epochs.js';
import { applyEffect } from '../commands/effects.js';
import type { Effect } from '../commands/plan.js';
import type { Backend } from '../pool/backend.js';
import type { Pool } from '../pool/pool.js';
import type { Session } from '../session/session.js';
import type { Analysis, SessionStateChange } from '@tessera/sql';
import { isWrite } from '../routing/writes.js';
import { applyState, settle } from './backends.js';
import type { ExchangeResult, Expectation } from './exchange.js';
import { run1, runShared } from './run.js';

/**
 * How a statement gets its backend: `lane` shares one with other clients' autocommit reads
 * (pipelined), `held` uses the one the session holds for the node (a transaction, session
 * pooling, an open cycle, a pinned backend), `own` takes one from the pool for itself.
 */
export type Policy = 'lane' | 'held' | 'own';

/** Session state a statement leaves on (or clears from) its backend (session/pins.ts). */
export interface StateEffect {
  readonly kind: 'state';
  readonly change: SessionStateChange;
}

interface Pending {
  /** Index of the statement's Execute (or Query) among the round's expectations. */
  readonly at: number;
  readonly effect: Effect | StateEffect;
}

export class Round {
  node: string | undefined;
  backend: Backend | undefined;
  policy: Policy | undefined;
  /** lane: the pool the backend goes back to, and a statement name whose Parse is in flight. */
  pool: Pool | undefined;
  parsing: string | undefined;
  readonly messages: Buffer[] = [];
  readonly expect: Expectation[] = [];
  /** Command tags wanted (a simple Query's bookkeeping). */
  collectTags = false;
  #pending: Pending[] | undefined;
  #epoch: Epoch | undefined;
  #moreEpochs: Epoch[] | undefined;
  /** The client's statements in the round, looked into only if the batch crosses nodes. */
  #statement: Analysis | undefined;
  #moreStatements: Analysis[] | undefined;

  /** Whether a statement of the client's is queued (not only the router's own messages). */
  get queued(): boolean {
    return this.expect.length > 0;
  }

  /** The client's statement `a` is in this round. */
  note(a: Analysis): void {
    if (this.#statement === undefined) this.#statement = a;
    else (this.#moreStatements ??= []).push(a);
  }

  /** Whether a statement of the round may write (asked when its batch crosses nodes). */
  mayWrite(): boolean {
    const a = this.#statement;
    return a !== undefined && (isWrite(a) || (this.#moreStatements?.some(isWrite) ?? false));
  }

  /** The epoch the round's first statement was admitted under. */
  get firstEpoch(): Epoch | undefined {
    return this.#epoch;
  }

  /** A statement admitted under `e` is in this round: `e` counts it until the round is over. */
  enter(e: Epoch): void {
    e.enter();
    if (this.#epoch === undefined) this.#epoch = e;
    else (this.#moreEpochs ??= []).push(e);
  }

  /** Applied once the round ran, if the statement whose Execute is expectation `at` succeeded. */
  after(at: number, effect: Effect | StateEffect): void {
    (this.#pending ??= []).push({ at, effect });
  }

  /** The epochs entered, handed over (to an open cycle) or left. */
  takeEpochs(): Epoch[] {
    const out: Epoch[] = [];
    if (this.#epoch !== undefined) out.push(this.#epoch);
    if (this.#moreEpochs !== undefined) out.push(...this.#moreEpochs);
    this.#epoch = undefined;
    this.#moreEpochs = undefined;
    return out;
  }

  leaveEpochs(): void {
    this.#epoch?.leave();
    if (this.#moreEpochs !== undefined) for (const e of this.#moreEpochs) e.leave();
    this.#epoch = undefined;
    this.#moreEpochs = undefined;
  }

  /** What ran: effects of the statements before the first error (none if an implicit one failed). */
  applyAfter(s: Session, result: ExchangeResult): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    const errorAt = result.errorAt;
    // Outside a transaction block, an error rolls back the whole implicit transaction.
    if (errorAt !== undefined && result.status === 'I') return;
    for (const p of pending) {
      if (errorAt !== undefined && p.at >= errorAt) continue;
      if (p.effect.kind === 'state') applyState(s, this.node!, p.effect.change);
      else applyEffect(s, p.effect, this.backend);
    }
  }
}

/**
 * Sends the round and forwards the node's answers; `cycle`: it ends at a Flush, and the backend
 * stays with the session until the Sync. Rejects (08006) if the backend is lost. The exchange's
 * own promise and one step after it, not an async function: this runs for every statement.
 */
export function sendRound(s: Session, round: Round, cycle: boolean): Promise<ExchangeResult> {
  const backend = round.backend!;
  if (round.policy === 'lane') {
    const done = (): void => {
      if (round.parsing !== undefined) backend.parsing.delete(round.parsing);
      round.pool!.giveBack(backend);
      round.leaveEpochs();
    };
    let ran: Promise<ExchangeResult>;
    try {
      ran = runShared(s, backend, round.messages, round.expect);
    } catch (e) {
      done();
      return Promise.reject(e);
    }
    return ran.then(
      (result) => {
        try {
          round.applyAfter(s, result);
        } finally {
          done();
        }
        return result;
      },
      (e: unknown) => {
        done();
        throw e;
      },
    );
  }
  const node = round.node!;
  let ran: Promise<ExchangeResult>;
  try {
    ran = run1(s, backend, round.messages, round.expect, round.collectTags);
  } catch (e) {
    reset(s, round, cycle);
    return Promise.reject(e);
  }
  // Two closures per round, the bookkeeping in functions: this runs for every statement.
  return ran.then(
    (result) => ranOn(s, round, node, cycle, result),
    (e: unknown) => {
      reset(s, round, cycle);
      throw e;
    },
  );
}

/** The round ran on `node`: its effects applied, the transaction and backend settled. */
function ranOn(
  s: Session,
  round: Round,
  node: string,
  cycle: boolean,
  result: ExchangeResult,
): ExchangeResult {
  try {
    round.applyAfter(s, result);
    s.cycle = cycle ? node : undefined;
    // A Sync's (or Query's) ReadyForQuery was forwarded; it is the session's status now too.
    settle(s, node);
  } catch (e) {
    reset(s, round, cycle);
    throw e;
  }
  over(s, round, cycle);
  return result;
}

/** The round's epochs: kept for the open cycle (`cycle`), or left, with the cycle's before it. */
function over(s: Session, round: Round, cycle: boolean): void {
  if (cycle) s.cycleEpochs.push(...round.takeEpochs());
  else {
    round.leaveEpochs();
    if (s.cycleEpochs.length > 0) for (const e of s.cycleEpochs.splice(0)) e.leave();
  }
}

/** The round failed: no cycle stays open. */
function reset(s: Session, round: Round, cycle: boolean): void {
  s.cycle = undefined;
  over(s, round, cycle);
}
