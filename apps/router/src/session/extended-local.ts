// The extended-protocol portals the router runs itself at their Execute, without the batch's
// backend (transaction control before a node is picked or across nodes, SET, DISCARD, DEALLOCATE,
// statements on several nodes) and what it refuses of them at Bind; and a refused message
// answered in its place.
import {
  Writer,
  writeBind,
  writeCommandComplete,
  writeExecute,
  writeParse,
} from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import { unsupported } from '../errors.js';
import { route } from '../routing/route.js';
import type { AllRoute, MultiWriteRoute, Route } from '../routing/route-types.js';
import type { Backend } from '../pool/backend.js';
import type { Expectation } from './exchange.js';
import { errorFields, errorFrame } from './errors-wire.js';
import { failTransaction } from './engage.js';
import type { Session } from './session.js';
import { POISON_SQL } from './engage.js';
import { localTransaction } from './simple-query.js';
import { runMultiWrite, runOnAll } from './fanout.js';
import { crossNodeControl, setOnEveryNode } from './txn.js';

/** A portal the router answers itself (BEGIN before a node is picked, SET, DDL on every node). */
export interface LocalPortal {
  readonly analysis: Analysis;
}

/** Statements the router runs on several nodes itself at Execute (they describe as NoData). */
export function runsOnSeveral(r: Route): boolean {
  return r.kind === 'all' || r.kind === 'multi_write';
}

/**
 * Refuses, at its Bind, a statement the router would run on several nodes at Execute where the
 * extended protocol cannot have it yet: with parameters, behind statements queued for a backend
 * (`queued`), or an UPDATE/DELETE ... RETURNING across nodes.
 */
export function checkBindOnSeveral(
  a: Analysis,
  r: AllRoute | MultiWriteRoute,
  queued: boolean,
): void {
  if (a.paramCount > 0 || queued)
    throw unsupported(
      'a statement that runs on several nodes cannot take parameters or share a pipeline with others yet',
    );
  if (r.kind === 'multi_write' && (a.kind === 'update' || a.kind === 'delete') && a.hasReturning)
    throw unsupported(
      `${a.kind.toUpperCase()} ... RETURNING whose rows span nodes is not supported through the extended query protocol yet; send it as a simple query`,
    );
}

/** Statements the router answers without a backend. */
export function isLocal(s: Session, a: Analysis): boolean {
  switch (a.kind) {
    // Answered by the router before a node holds the transaction, and when several do (txn.ts).
    case 'transaction':
      return (
        s.txn.phase !== 'one' ||
        a.action === 'prepare_transaction' ||
        a.action === 'commit_prepared' ||
        a.action === 'rollback_prepared'
      );
    case 'set':
      return s.txn.phase !== 'one';
    case 'discard':
    case 'deallocate':
      return true;
    default:
      return false;
  }
}

/** Executes a local portal, its answer emitted in order. */
export async function runLocal(s: Session, a: Analysis, emit: (b: Buffer) => void): Promise<void> {
  const complete = (tag: string): void => emit(writeCommandComplete(new Writer(32), tag).flush());
  switch (a.kind) {
    case 'transaction':
      if (s.txn.phase === 'one' || s.txn.phase === 'cross') return crossNodeControl(s, a, emit);
      return localTransaction(s, a, emit);
    case 'set':
      if (s.txn.phase === 'cross') {
        for (const b of await setOnEveryNode(s, a)) emit(b);
        return;
      }
      s.txn.defer(a.sql);
      s.settings.apply(a);
      return complete(a.action === 'reset' || a.action === 'reset_all' ? 'RESET' : 'SET');
    case 'discard':
      if (a.target === 'all') {
        s.settings.resetAll();
        s.statements.clear();
      }
      return complete(`DISCARD ${a.target.toUpperCase()}`);
    case 'deallocate':
      if (a.name === undefined) s.statements.clear();
      else s.statements.delete(a.name);
      return complete(a.name === undefined ? 'DEALLOCATE ALL' : 'DEALLOCATE');
    default: {
      // A statement on several nodes (DDL, reference write, UPDATE or DELETE across nodes), run
      // as a simple query on each.
      const r = route(a, s.catalog(), undefined);
      if (r.kind === 'all') return runOnAll(s, r, a);
      if (r.kind === 'multi_write') return runMultiWrite(s, r, a);
      throw unsupported('this statement cannot be answered by the router');
    }
  }
}

/** The error for a refused message, in its place: a poison Execute when a backend already has work queued. */
export async function refuse(
  s: Session,
  e: unknown,
  at: {
    backend: Backend | undefined;
    messages: Buffer[];
    expect: Expectation[];
    synth: (b: Buffer) => void;
  },
): Promise<void> {
  const cause = e;
  const { fields, fatal } = errorFields(cause);
  if (fatal) {
    s.sendError(cause);
    return;
  }
  s.services.metrics.error(fields.code);
  const frame = errorFrame(fields);
  if (at.backend) {
    // The node runs a statement that fails, so its implicit (or explicit) transaction fails too,
    // exactly as if the refused statement had failed there; the client sees the router's error.
    at.messages.push(
      writeParse(new Writer(128), '', POISON_SQL).flush(),
      writeBind(new Writer(32), {}).flush(),
      writeExecute(new Writer(16)).flush(),
    );
    at.expect.push(
      { t: 'one', forward: false },
      { t: 'one', forward: false },
      { t: 'poison', bytes: frame },
    );
    at.backend.unnamedOwner = undefined;
    return;
  }
  at.synth(frame);
  await failTransaction(s).catch(() => undefined);
}
