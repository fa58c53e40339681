// A portal of the extended protocol whose statement reads across nodes: what its Bind said (kept
// until Execute, when the router runs it itself), its Execute, and the answer to a Describe of it.
import {
  NO_DATA,
  SYNC,
  Writer,
  decodeBind,
  writeDescribe,
  writeRowDescription,
} from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { BackendError } from '../pool/backend.js';
import { HeldOut } from './client-out.js';
import type { Expectation } from './exchange.js';
import type { ScatterRoute } from '../routing/route-types.js';
import { describeScatter, runScatter, type ScatterBind } from './scatter.js';
import { QUERY_PLAN_FIELD } from './scatter-explain.js';
import { engage, settle } from './engage.js';
import { run1 } from './run.js';
import type { Session } from './session.js';
import type { StatementRecord } from './statements.js';

export interface ScatterPortal {
  readonly route: ScatterRoute;
  readonly analysis: Analysis;
  readonly sql: string;
  readonly bind: ScatterBind;
  /** A Describe of the portal came just before its Execute: the Execute sends the RowDescription. */
  describe: boolean;
}

export function bindOfScatter(
  r: ScatterRoute,
  rec: StatementRecord,
  a: Analysis,
  body: Buffer,
): ScatterPortal {
  const b = decodeBind(body);
  if (b.resultFormats.some((f) => f !== 0))
    throw unsupported(
      'binary result format is not supported for reads across nodes; request text results',
    );
  const formats = b.params.map((_, i) =>
    b.paramFormats.length === 0 ? 0 : (b.paramFormats[b.paramFormats.length === 1 ? 0 : i] ?? 0),
  );
  return {
    route: r,
    analysis: a,
    sql: rec.sql,
    bind: { values: b.params, formats, types: rec.paramTypes, paramCount: a.paramCount },
    describe: false,
  };
}

/** Runs the portal at its Execute, its rows straight to the client (the whole result: no row limit). */
export async function executeScatterPortal(
  s: Session,
  sp: ScatterPortal,
  maxRows: number,
): Promise<void> {
  if (maxRows > 0)
    throw unsupported(
      'fetching a read across nodes in parts (Execute with a row limit, cursors) is not supported yet',
    );
  await runScatter(s, sp.route, {
    analysis: sp.analysis,
    bind: sp.bind,
    rowDescription: sp.describe,
  });
  sp.describe = false;
}

/** The refusal of a multi-node portal in a batch that has statements queued for a backend already. */
export function scatterPipeline(): Error {
  return unsupported(
    'a read across nodes cannot share a pipeline with statements already sent to a node before its Sync yet; send a Sync first',
  );
}

/** RowDescription (or NoData) for a Describe of a multi-node portal not followed by its Execute. */
export async function scatterDescribeFrame(s: Session, p: ScatterPortal): Promise<Buffer> {
  if (p.analysis.kind === 'explain')
    return writeRowDescription(new Writer(64), [QUERY_PLAN_FIELD]).flush();
  const fields = await describeScatter(s, p.route, p.sql, p.bind.types);
  return fields === undefined ? NO_DATA : writeRowDescription(new Writer(256), fields).flush();
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
): Promise<Buffer> {
  const e = await engage(s, node, s.catalog(), false);
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
    { t: 'describe_s' },
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
  if (rfq < 0 || all[rfq] !== 0x5a)
    throw new RouterError(SQLSTATE.protocolViolation, 'unexpected answer to Describe from a node');
  return all.subarray(0, rfq);
}
