// Where both protocols admit a statement: the current epoch read once, the session's
// transaction as admit() reads it, and a held statement parked until a later epoch.
import { admit, type AdmitTxn } from '../admit/admit.js';
import type { Decision } from '../admit/decision.js';
import type { Epoch } from '../catalog/epochs.js';
import { waitWhileHeld } from '../execute/hold.js';
import { sessionNames } from '../session/names.js';
import { isSerializable } from '../txn/isolation.js';
import { cursorsEndedBy } from '../scatter/cursor-wire.js';
import type { Session } from '../session/session.js';
import type { Statement } from '../statement/statement.js';

/**
 * The session's transaction as admit() reads it, read live. A class, not an object literal with
 * getters: a literal's getters close over their session, so every session's view had a map of
 * its own and admit()'s reads of it went megamorphic.
 */
class TxnView implements AdmitTxn {
  readonly transactionPooling: boolean;

  constructor(private readonly s: Session) {
    this.transactionPooling = s.services.config.poolMode === 'transaction';
  }

  get phase(): AdmitTxn['phase'] {
    return this.s.txn.phase;
  }

  get status(): AdmitTxn['status'] {
    return this.s.status();
  }

  get names(): AdmitTxn['names'] {
    return sessionNames(this.s);
  }

  firstWriteEpoch(node: string): bigint | undefined {
    return this.s.txn.firstWriteEpoch(node);
  }

  touched(node: string): boolean {
    return this.s.txn.touched(node);
  }

  get touchedCount(): number {
    return this.s.txn.touchedCount;
  }

  get serializable(): boolean {
    const txn = this.s.txn;
    const statements = txn.phase === 'deferred' ? txn.prelude : txn.replayLog;
    return isSerializable(txn.beginSql, statements, this.s.settings.isolationDefault());
  }
}

/** The session's transaction as admit() reads it (one object per session, read live). */
export function txnView(s: Session): AdmitTxn {
  return ((s.admitView as AdmitTxn | undefined) ??= new TxnView(s));
}

/** The decision for `stmt` under the current epoch, without waiting (it may be Held). */
export function admitNow(s: Session, stmt: Statement): Decision<Epoch> {
  return admit(stmt, s.epoch(), txnView(s), leaseOf(s));
}

/**
 * The decision for `stmt`; a held statement first waits for a later epoch (execute/hold.ts). What
 * ends the transaction first closes the cursors the router runs in it (scatter/cursor-wire.ts).
 */
export function admitted(s: Session, stmt: Statement): Decision<Epoch> | Promise<Decision<Epoch>> {
  if (s.sqlCursors.size > 0 || s.cursors.size > 0) {
    const closing = cursorsEndedBy(s, stmt.analysis);
    if (closing !== undefined) return closing.then(() => admitted(s, stmt));
  }
  const d = admitNow(s, stmt);
  if (d.kind !== 'held') return counted(s, d);
  return waitWhileHeld(s, d, (e) => admit(stmt, e, txnView(s), leaseOf(s))).then((x) =>
    counted(s, x),
  );
}

const leaseOf = (s: Session): 'valid' | 'lapsed' =>
  s.services.lease.lapsed() ? 'lapsed' : 'valid';

/** A statement routing refused is counted as one (the executor counts those it runs). */
function counted(s: Session, d: Decision<Epoch>): Decision<Epoch> {
  if (d.kind === 'refused' && d.label !== undefined) s.services.metrics.statements(d.label);
  return d;
}
