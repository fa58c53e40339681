// What the extended protocol refuses of statements the router runs on several nodes at their
// Execute, and a refused message answered in its place: an ErrorResponse, with the node's part
// of the transaction failed in order when the batch already queued work for a backend.
import { Writer, bindPortalName, writeBind, writeExecute, writeParse } from '@tessera/pg-wire';
import type { SessionCommand } from '../commands/plan.js';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { boundValues } from '../execute/bound.js';
import type { Routed } from '../admit/decision.js';
import type { Epoch } from '../catalog/epochs.js';
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
): RouterPortal & { kind: 'several' } {
  const a = rec.analysis!;
  const r = d.route;
  const portal = {
    kind: 'several',
    decision: d,
    analysis: a,
    sql: rec.sql,
    describe: false,
  } as const;
  if (r.kind === 'scatter') return { ...portal, bind: bindValues(rec, a, bind.body) };
  // DDL and maintenance take no parameters and return no rows: sent as simple queries.
  if (r.kind === 'all' && r.why !== 'reference_write') return { ...portal, bind: NO_VALUES };
  // A write: each node gets the client's Bind as it came (values, formats, result formats).
  return { ...portal, bind: NO_VALUES, bound: boundValues(bind.body, rec.paramTypes) };
}

/**
 * Refuses, at its Bind, a PREPARE behind statements of the batch queued for a backend: a node
 * checks it in the session's context, ahead of that queue. (Transaction control and SET across
 * nodes come after what is queued: crossing.ts beforeLocal sends it first.)
 */
export function checkLocalInPipeline(s: Session, command: SessionCommand, round: Round): void {
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

/**
 * The portal a Bind names. One the router holds must be gone first: a named portal lives until its
 * Close or its transaction's end (a Sync outside a transaction block), as in Postgres, which
 * refuses it with 42P03; the unnamed portal is replaced.
 */
export function newPortalName(s: Session, bindBody: Buffer): string {
  const portal = bindPortalName(bindBody);
  if (portal !== '' && s.portals.has(portal))
    throw new RouterError(SQLSTATE.duplicateCursor, `cursor "${portal}" already exists`);
  return portal;
}
