// The extended protocol's side of a read across nodes: what its Bind said (kept in the portal
// until its Execute, when the router runs it under the snapshot its Bind was admitted with), and
// the answers to a Describe of it or of its statement.
import {
  BackendCode,
  NO_DATA,
  SYNC,
  Writer,
  decodeBind,
  writeDescribe,
  writeRowDescription,
} from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { BackendError } from '../pool/backend.js';
import { HeldOut } from '../session/client-out.js';
import type { Expectation } from '../execute/exchange.js';
import { engage, settle } from '../execute/backends.js';
import { run1 } from '../execute/run.js';
import type { Session } from '../session/session.js';
import type { StatementRecord } from '../statement/prepared.js';
import type { BindValues, RouterPortal } from '../statement/portal.js';
import type { ScatterRoute } from '../routing/route-types.js';
import { describeScatter } from './scatter.js';
import { withFormats } from './formats.js';
import { QUERY_PLAN_FIELD } from './explain.js';

type SeveralPortal = RouterPortal & { kind: 'several' };

/** The values of a Bind the router runs itself, and the result formats it asks for. */
export function bindValues(rec: StatementRecord, a: Analysis, body: Buffer): BindValues {
  const b = decodeBind(body);
  const formats = b.params.map((_, i) =>
    b.paramFormats.length === 0 ? 0 : (b.paramFormats[b.paramFormats.length === 1 ? 0 : i] ?? 0),
  );
  return {
    values: b.params,
    formats,
    types: rec.paramTypes,
    paramCount: a.paramCount,
    resultFormats: b.resultFormats,
  };
}

/** The refusal of a multi-node portal in a batch that has statements queued for a backend already. */
export function scatterPipeline(): Error {
  return unsupported(
    'a read across nodes cannot share a pipeline with statements already sent to a node before its Sync yet; send a Sync first',
  );
}

/**
 * RowDescription (or NoData) for a Describe of a multi-node portal not followed by its Execute,
 * with the formats its Bind asked.
 */
export async function scatterDescribeFrame(s: Session, p: SeveralPortal): Promise<Buffer> {
  if (p.decision.route.kind !== 'scatter') return NO_DATA;
  const formats = p.bind.resultFormats;
  if (p.analysis.kind === 'explain')
    return writeRowDescription(new Writer(64), withFormats([QUERY_PLAN_FIELD], formats)).flush();
  const r: ScatterRoute = p.decision.route;
  const fields = await describeScatter(s, r, p.sql, p.bind.types, p.decision.epoch.snapshot);
  if (fields === undefined) return NO_DATA;
  return writeRowDescription(new Writer(256), withFormats(fields, formats)).flush();
}

/**
 * Describe of a statement that may read across nodes, answered by one node on its own round trip
 * (ParameterDescription and RowDescription of the client's statement), so no backend is left
 * engaged in the batch: the statement's rows may later come from several nodes at its Execute.
 */
export async function describeStatementFrames(
  s: Session,
  node: string,
  rec: StatementRecord,
  snapshot: Snapshot,
  /** Leave out its ParameterDescription (an SQL EXECUTE's, which has no parameters, is the caller's). */
  noParams = false,
): Promise<Buffer> {
  const e = await engage(s, node, snapshot, false);
  e.backend.unnamedOwner = undefined;
  const held = new HeldOut(true);
  const messages = [
    ...e.messages,
    rec.parseFrame(''),
    writeDescribe(new Writer(16), 'S', '').flush(),
    SYNC,
  ];
  const expect: Expectation[] = [
    ...e.expect,
    { t: 'one', forward: false },
    { t: 'describe_s', noParams },
    { t: 'sync' },
  ];
  let result;
  try {
    result = await run1(s, e.backend, messages, expect, false, held);
  } finally {
    settle(s, node);
  }
  if (result.error !== undefined) throw new BackendError(result.error);
  const all = Buffer.concat(held.pieces);
  // The node's ReadyForQuery ends the answer; the batch sends its own at the client's Sync.
  const rfq = all.length - 6;
  if (rfq < 0 || all[rfq] !== BackendCode.ReadyForQuery)
    throw new RouterError(SQLSTATE.protocolViolation, 'unexpected answer to Describe from a node');
  return all.subarray(0, rfq);
}
