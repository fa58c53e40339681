// The extended-protocol messages the router answers on its own: Parse (the statement is kept and
// prepared lazily where it runs) and Close (a client name goes; a portal on a node is closed
// there); and the Bind of an empty statement, which any backend answers.
import {
  CLOSE_COMPLETE,
  PARSE_COMPLETE,
  decodeClose,
  decodeParse,
  rewriteBindStatement,
} from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import { EXPECT_ONE } from '../execute/exchange.js';
import type { Round } from '../execute/round.js';
import type { Backend } from '../pool/backend.js';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import { StatementRecord, prepareOn } from '../statement/prepared.js';
import type { RouterPortal } from '../statement/portal.js';
import type { Batch } from './describe.js';

/** Parse: remembered; prepared on a backend when a Bind or Describe needs it there. */
export function parse(s: Session, m: InMsg, synth: (b: Buffer) => void): undefined {
  const p = decodeParse(m.body);
  if (p.name !== '' && s.statements.has(p.name))
    throw new RouterError(
      SQLSTATE.duplicatePreparedStatement,
      `prepared statement "${p.name}" already exists`,
    );
  const analyses = s.services.cache.get(p.sql);
  if (analyses.length > 1)
    throw new RouterError('42601', 'cannot insert multiple commands into a prepared statement');
  s.statements.set(p.name, new StatementRecord(p.name, p.sql, p.paramTypes, analyses));
  synth(PARSE_COMPLETE);
  return undefined;
}

/**
 * Close of a statement (the client's name only: the server's may serve others) or a portal;
 * `drop` ends what a portal the router runs still holds (a read fetched in parts).
 */
export function close(
  s: Session,
  m: InMsg,
  round: Round,
  synth: (b: Buffer) => void,
  drop: (s: Session, p: RouterPortal | undefined) => Promise<void> | undefined,
): Promise<void> | undefined {
  const c = decodeClose(m.body);
  const p = c.target === 'P' ? s.portals.get(c.name) : undefined;
  if (c.target === 'S') {
    s.statements.delete(c.name);
    synth(CLOSE_COMPLETE);
  } else if (s.portals.delete(c.name) || round.backend === undefined) {
    const closing = drop(s, p);
    if (closing !== undefined) return closing.then(() => synth(CLOSE_COMPLETE));
    synth(CLOSE_COMPLETE);
  } else {
    round.messages.push(m.raw);
    round.expect.push(EXPECT_ONE);
  }
  return undefined;
}

/** An empty statement: any backend answers EmptyQueryResponse (the batch's, if it has one). */
export function bindEmpty(
  b: Batch & { nodeFor(node: string, flexible: boolean): string },
  m: InMsg,
  rec: StatementRecord,
): Promise<void> | undefined {
  const node = b.nodeFor(b.s.epoch().snapshot.home, true);
  const got = b.backendFor(node, true);
  const go = (backend: Backend): void => {
    const { messages, expect } = b.round;
    const name = prepareOn(backend, rec, b.s.settings.key(), messages, expect);
    messages.push(name === '' ? m.raw : rewriteBindStatement(m.body, name));
    expect.push(EXPECT_ONE);
  };
  if (got instanceof Promise) return got.then(go);
  go(got);
  return undefined;
}
