// Describe in the extended protocol. Of a statement: answered by the router for what it runs
// itself (session commands, statements for every node), on a round trip of its own for a read
// that may come from several nodes, else by the node the statement would run on (the one its
// key pins, the batch's, the transaction's, or home). Of a portal: by the node it was bound on,
// or by the router for its own portals.
import {
  BackendCode,
  FrameReader,
  FrontendCode,
  NO_DATA,
  Writer,
  decodeDescribe,
  decodeExecute,
  decodeRowDescription,
  frameBytes,
  writeDescribe,
  writeParameterDescription,
  writeRowDescription,
} from '@tessera/pg-wire';
import {
  EXPECT_DESCRIBE_PORTAL,
  EXPECT_DESCRIBE_STATEMENT,
  type Expectation,
} from '../execute/exchange.js';
import { pickNode } from '../execute/backends.js';
import type { Round } from '../execute/round.js';
import type { Backend } from '../pool/backend.js';
import {
  describeStatementFrames,
  scatterDescribeFrame,
  scatterPipeline,
} from '../scatter/portal.js';
import type { Analysis } from '@tessera/sql';
import type { Route } from '../routing/route-types.js';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import { portalResultFormats, type RouterPortal } from '../statement/portal.js';
import { prepareOn, statementNamed, StatementRecord } from '../statement/prepared.js';
import { cursorDescription, cursorNode, describeCursorPortal } from '../scatter/cursor-wire.js';
import { admitNow } from './admission.js';
import { rewrittenRecord } from '../session/rewrite.js';

const NO_PARAMS: Expectation = { t: 'describe_s', noParams: true };

/** What Describe needs of the batch it is in (extended.ts). */
export interface Batch {
  readonly s: Session;
  readonly round: Round;
  /** Puts a frame the router answers in its place among the node's answers. */
  readonly synth: (b: Buffer) => void;
  preferredNode(): string | undefined;
  backendFor(node: string, begin: boolean): Backend | Promise<Backend>;
}

export function describe(b: Batch, m: InMsg, next: InMsg | undefined): Promise<void> | undefined {
  const d = decodeDescribe(m.body);
  if (d.target === 'S') {
    const rec = statementNamed(b.s.statements, d.name);
    return describeStatement(b, m, rewrittenRecord(b.s, rec) ?? rec);
  }
  const p = b.s.portals.get(d.name);
  if (p === undefined) {
    // An SQL cursor's portal: the router's own cursor answers, a one-node one its node.
    const cursor = b.s.sqlCursors.size > 0 ? describeCursorPortal(b.s, d.name) : undefined;
    if (cursor !== undefined && 'frame' in cursor) return void b.synth(cursor.frame);
    const node = cursor?.node ?? pickNode(b.s, b.s.epoch().snapshot.home, true);
    return onNode(b, m, node);
  }
  // FETCH from a cursor the router runs: the cursor's columns.
  const fetched =
    p.kind === 'several' ? cursorDescription(b.s, p.analysis, portalResultFormats(p)) : undefined;
  if (fetched !== undefined) return void b.synth(fetched);
  const scatter = p.kind === 'several' && p.decision.route.kind === 'scatter';
  if (p.kind === 'local' || (!scatter && p.bound === undefined)) return void b.synth(NO_DATA);
  if (next?.code === FrontendCode.Execute && decodeExecute(next.body).portal === d.name) {
    // The RowDescription the executor produces leads the Execute's rows, just after.
    p.describe = true;
    return undefined;
  }
  if (b.round.backend !== undefined) throw scatterPipeline();
  if (scatter) return scatterDescribeFrame(b.s, p).then(b.synth);
  return writePortalFrame(b.s, p).then(b.synth);
}

/**
 * RowDescription (or NoData) of a write across nodes described apart from its Execute: its
 * statement described by one node, in the result formats of the portal's Bind.
 */
async function writePortalFrame(
  s: Session,
  p: RouterPortal & { kind: 'several' },
): Promise<Buffer> {
  const d = p.decision;
  const node = severalNode(p.analysis, d.route, d.epoch.snapshot.home) ?? d.epoch.snapshot.home;
  const rec = new StatementRecord('', p.sql, p.bound?.types ?? [], [p.analysis]);
  const frames = await describeStatementFrames(s, node, rec, d.epoch.snapshot, true);
  const reader = new FrameReader();
  reader.push(frames);
  const out: Buffer[] = [];
  for (let f = reader.next(); f; f = reader.next()) {
    if (f.code !== BackendCode.RowDescription) {
      out.push(Buffer.from(frameBytes(f)));
      continue;
    }
    const formats = p.bound?.resultFormats ?? [];
    const fields = decodeRowDescription(Buffer.from(f.body)).map((field, i) => ({
      ...field,
      format: formats.length === 0 ? 0 : (formats[formats.length === 1 ? 0 : i] ?? 0),
    }));
    out.push(writeRowDescription(new Writer(256), fields).flush());
  }
  return Buffer.concat(out);
}

/** A Describe of a portal bound on a node: that node answers (the batch's backend). */
function onNode(b: Batch, m: InMsg, node: string): Promise<void> | undefined {
  const got = b.backendFor(node, false);
  const go = (): void => {
    b.round.messages.push(m.raw);
    b.round.expect.push(EXPECT_DESCRIBE_PORTAL);
  };
  if (got instanceof Promise) return got.then(go);
  go();
  return undefined;
}

function describeStatement(b: Batch, m: InMsg, rec: StatementRecord): Promise<void> | undefined {
  const s = b.s;
  const a = rec.analysis;
  const snapshot = s.epoch().snapshot;
  if (a?.kind === 'execute') {
    // Postgres describes an SQL EXECUTE by the statement it runs, with no parameters of its own.
    // On a round trip of its own when the batch has no backend yet: the EXECUTE's Bind picks
    // the node its arguments route to.
    const runs = statementNamed(s.statements, a.name);
    b.synth(writeParameterDescription(new Writer(16), []).flush());
    if (b.round.backend !== undefined)
      return describeOn(b, m, runs, snapshot.home, true, NO_PARAMS);
    const node = pickNode(s, snapshot.home, true);
    return describeStatementFrames(s, node, runs, snapshot, true).then(b.synth);
  }
  const cursor = a === undefined ? undefined : cursorDescription(s, a);
  if (cursor !== undefined) {
    // A FETCH, MOVE or CLOSE of a cursor the router runs: answered from the cursor.
    b.synth(writeParameterDescription(new Writer(16), []).flush());
    return void b.synth(cursor);
  }
  let target = snapshot.home;
  let flexible = true;
  if (a !== undefined) {
    const d = admitNow(s, {
      analysis: a,
      params: undefined,
      protocol: 'extended',
      purpose: 'describe',
    });
    const r = d.kind === 'routed' ? d.route : undefined;
    const queued = b.round.backend !== undefined;
    // A write for several nodes always, a read whose rows may come from several when nothing
    // picked a node (inside a transaction too: its Execute needs no backend engaged): described
    // by one node that has its tables, on a round trip of its own (no backend is left engaged in
    // this batch), so its ParameterDescription and RowDescription are the ones Postgres gives.
    // In a batch already on a node, that node describes it.
    const several = r === undefined ? undefined : severalNode(a, r, snapshot.home);
    const write =
      r?.kind === 'all' ||
      r?.kind === 'multi_write' ||
      r?.kind === 'split' ||
      r?.kind === 'insert_select';
    const own =
      !queued &&
      (write || (b.preferredNode() === undefined && (!s.inTransaction() || r?.kind === 'scatter')));
    if (own && several !== undefined)
      return describeStatementFrames(s, several, rec, snapshot).then(b.synth);
    // Answered by the router: session commands.
    if (d.kind === 'local') {
      b.synth(writeParameterDescription(new Writer(32), rec.paramTypes).flush());
      return void b.synth(NO_DATA);
    }
    if (r?.kind === 'node') ({ node: target, flexible } = r);
    const at = cursorNode(s, a);
    if (at !== undefined) [target, flexible] = [at, false];
  }
  return describeOn(b, m, rec, target, flexible);
}

/** The node describing a statement that runs on several (undefined: it runs on one). */
function severalNode(a: Analysis, r: Route, home: string): string | undefined {
  switch (r.kind) {
    case 'all':
    case 'multi_write':
    case 'insert_select':
    case 'scatter':
      return r.nodes[0];
    case 'split':
      return r.parts[0]?.node;
    case 'params':
      return a.kind === 'select' || a.kind === 'explain' ? home : undefined;
    default:
      return undefined;
  }
}

/**
 * The statement described by a node: the batch's if it has one, else the one its key pins (a
 * statement not bound yet need not join the transaction there: Describe runs outside it).
 */
function describeOn(
  b: Batch,
  m: InMsg,
  rec: StatementRecord,
  target: string,
  flexible: boolean,
  expectation = EXPECT_DESCRIBE_STATEMENT,
): Promise<void> | undefined {
  const s = b.s;
  if (flexible) target = b.preferredNode() ?? target;
  const node = b.round.node ?? pickNode(s, target, flexible);
  const got = b.backendFor(node, false);
  const go = (backend: Backend): void => {
    const { messages, expect } = b.round;
    const name = prepareOn(backend, rec, s.settings.key(), messages, expect);
    messages.push(
      name === '' ? m.raw : writeDescribe(new Writer(name.length + 16), 'S', name).flush(),
    );
    expect.push(expectation);
  };
  if (got instanceof Promise) return got.then(go);
  go(got);
  return undefined;
}
