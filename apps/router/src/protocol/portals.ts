// What the extended protocol refuses of statements the router runs on several nodes at their
// Execute, and a refused message answered in its place: an ErrorResponse, with the node's part
// of the transaction failed in order when the batch already queued work for a backend.
import { Writer, writeBind, writeExecute, writeParse } from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import type { SessionCommand } from '../commands/plan.js';
import { unsupported } from '../errors.js';
import type { Routed } from '../admit/decision.js';
import type { Epoch } from '../catalog/epochs.js';
import type { AllRoute, MultiWriteRoute } from '../routing/route-types.js';
import { bindValues } from '../scatter/portal.js';
import type { InMsg } from '../session/client-in.js';
import type { RouterPortal } from '../statement/portal.js';
import type { StatementRecord } from '../statement/prepared.js';
import { failTransaction, POISON_SQL } from '../execute/backends.js';
import type { Round } from '../execute/round.js';
import { errorFields, errorFrame } from '../session/errors-wire.js';
import type { Session } from '../session/session.js';

const NO_VALUES = Object.freeze({
  values: [],
  formats: [],
  types: [],
  paramCount: 0,
  resultFormats: [],
});

/** The portal the router keeps for a statement its Bind routed to several nodes (run at Execute). */
export function severalPortal(
  rec: StatementRecord,
  bind: InMsg,
  d: Routed<Epoch>,
  queued: boolean,
): RouterPortal & { kind: 'several' } {
  const a = rec.analysis!;
  const r = d.route;
  if (r.kind === 'all' || r.kind === 'multi_write') checkBindOnSeveral(a, r, queued);
  const values = r.kind === 'scatter' ? bindValues(rec, a, bind.body) : NO_VALUES;
  return { kind: 'several', decision: d, analysis: a, sql: rec.sql, bind: values, describe: false };
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

/**
 * Refuses, at its Bind, a session command the router answers at its Execute where messages of
 * the batch already wait for a backend: they would run after it, in the wrong order.
 */
export function checkLocalInPipeline(s: Session, command: SessionCommand, round: Round): void {
  if (
    s.txn.phase === 'cross' &&
    round.queued &&
    (command.kind === 'transaction' || command.kind === 'set')
  )
    throw unsupported(
      'transaction control and SET after other statements in one pipeline are not supported in a transaction across nodes; send a Sync first',
    );
  // A node checks PREPARE in the session's context: on the batch's backend, ahead of its queue.
  if (command.kind === 'prepare' && round.backend !== undefined)
    throw unsupported(
      'PREPARE after other statements in one pipeline is not supported by the router; send a Sync first',
    );
}

/** The error for a refused message, in its place: a poison Execute when a backend already has work queued. */
export async function refuse(
  s: Session,
  e: unknown,
  round: Round,
  synth: (b: Buffer) => void,
): Promise<void> {
  const { fields, fatal, internal } = errorFields(e);
  if (internal)
    s.services.log.error({ err: e, client: s.pid }, 'internal error while serving a client');
  if (fatal) {
    s.sendError(e);
    return;
  }
  s.services.metrics.error(fields.code);
  const frame = errorFrame(fields);
  if (round.backend !== undefined) {
    // The node runs a statement that fails, so its implicit (or explicit) transaction fails too,
    // exactly as if the refused statement had failed there; the client sees the router's error.
    round.messages.push(
      writeParse(new Writer(128), '', POISON_SQL).flush(),
      writeBind(new Writer(32), {}).flush(),
      writeExecute(new Writer(16)).flush(),
    );
    round.expect.push(
      { t: 'one', forward: false },
      { t: 'one', forward: false },
      { t: 'poison', bytes: frame },
    );
    round.backend.unnamedOwner = undefined;
    return;
  }
  synth(frame);
  await failTransaction(s).catch(() => undefined);
}
