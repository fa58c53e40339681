// COPY (query) TO STDOUT whose rows are merged at the router (ORDER BY, aggregates, LIMIT across
// nodes): the query runs as a read across nodes (libs/merge) and each merged row is written as
// COPY writes it: in text or CSV from its text values (copy/copy-text.ts), in binary from its
// values in their binary form, which the merge gives byte for byte as Postgres's send functions
// (a binary tuple is a DataRow's body). One node first runs the client's COPY over no rows (the
// probe: its query wrapped in `SELECT * FROM (...) LIMIT 0`), so options and the query are checked
// by Postgres itself, and its CopyOutResponse and header line are the client's.
import {
  COPY_DONE,
  Writer,
  writeCommandComplete,
  writeCopyData,
  writeQuery,
  type NoticeFields,
} from '@tessera/pg-wire';
import type { Snapshot } from '@tessera/keyspace';
import {
  MergeError,
  executeReadPlan,
  leafResultFormats,
  type FieldDescription,
  type Row,
} from '@tessera/merge';
import type { CopyToAnalysis, ReadPlan } from '@tessera/sql';
import { RouterError, unsupported } from '../errors.js';
import type { ScatterRoute } from '../routing/route-types.js';
import type { LeafRun } from '../scatter/leaf-run.js';
import { finishLeaves, startLeaves } from '../scatter/leaves.js';
import type { Session } from '../session/session.js';
import { BackendError } from '../pool/backend.js';
import { CopyTextEncoder } from '../copy/copy-text.js';
import { BINARY_HEADER, BINARY_TRAILER } from '../copy/copy-binary.js';
import { engage, lost, settle } from './backends.js';
import { CopyOutRun } from './copy-out-run.js';

const OUT_BATCH_BYTES = 32 * 1024;
const PROBE_BEFORE = 'SELECT * FROM (';
const PROBE_AFTER = ') AS tessera_copy LIMIT 0';

/** Client encodings whose multibyte characters may hold ASCII bytes (COPY escapes per character). */
const EMBEDS_ASCII =
  /\b(client_encoding|names)\b[^;]*\b(sjis|shift_jis|mskanji|win932|cp932|big5|win950|cp950|gbk|win936|cp936|uhc|win949|cp949|gb18030|johab)\b/i;

export async function copyMerged(
  s: Session,
  r: ScatterRoute,
  a: CopyToAnalysis,
  plan: ReadPlan,
  catalog: Snapshot,
): Promise<void> {
  const o = a.options;
  if (o.format !== 'binary' && (o.encoding !== undefined || EMBEDS_ASCII.test(s.settings.key())))
    throw unsupported(
      'COPY (query) TO STDOUT in text or csv with rows merged across nodes is written in the client encoding only (no ENCODING option, no SJIS, BIG5, GBK, UHC, GB18030 or JOHAB client encoding)',
    );
  const probe = await runProbe(s, r, a, catalog);
  if (probe instanceof BackendError) throw probe;
  // Binary: the probe's data is its empty stream (header and trailer); ours comes with the rows.
  for (const f of o.format === 'binary' ? probe.slice(0, 1) : probe) s.out.push(f);
  const resultFormats = o.format === 'binary' ? [1] : [];
  const leaves: LeafRun[] = [];
  const engaged: string[] = [];
  try {
    const req = { snapshot: catalog };
    await startLeaves(s, r, plan, req, engaged, leaves, leafResultFormats(plan, resultFormats));
    const results = executeReadPlan(plan, leaves, { params: [], resultFormats });
    const rows = await writeRows(s, a, results);
    s.out.push(COPY_DONE);
    s.out.push(writeCommandComplete(new Writer(32), `COPY ${rows}`).flush());
  } catch (e) {
    throw e instanceof MergeError ? new RouterError(e.sqlstate, e.message) : e;
  } finally {
    await finishLeaves(s, engaged, leaves);
  }
}

/** The merged rows as CopyData, one per row (binary: the header with the first); how many. */
async function writeRows(
  s: Session,
  a: CopyToAnalysis,
  results: ReturnType<typeof executeReadPlan>,
): Promise<number> {
  const binary = a.options.format === 'binary';
  let encode: ((values: Row) => Buffer) | undefined;
  let rows = 0;
  const out = new Writer(OUT_BATCH_BYTES + 1024);
  for await (const m of results) {
    if (s.closed) break; // the generator's return() stops every node's query
    if (m.kind === 'RowDescription') {
      const text = binary ? undefined : encoderFor(a, m.fields);
      encode = text === undefined ? binaryTuple : (values) => text.row(values);
    }
    if (m.kind !== 'DataRow') continue;
    const tuple = encode!(m.values);
    writeCopyData(out, binary && rows === 0 ? Buffer.concat([BINARY_HEADER, tuple]) : tuple);
    rows++;
    if (out.length < OUT_BATCH_BYTES) continue;
    s.out.push(out.flush());
    if (!s.out.flush()) await s.out.drained();
  }
  if (binary)
    writeCopyData(
      out,
      rows === 0 ? Buffer.concat([BINARY_HEADER, BINARY_TRAILER]) : BINARY_TRAILER,
    );
  s.out.push(out.flush());
  return rows;
}

/** A row whose values are in binary form as COPY's binary tuple: a DataRow's body. */
function binaryTuple(values: Row): Buffer {
  let size = 2;
  for (const v of values) size += 4 + (v?.length ?? 0);
  const b = Buffer.allocUnsafe(size);
  b.writeInt16BE(values.length, 0);
  let at = 2;
  for (const v of values) {
    b.writeInt32BE(v === null ? -1 : v.length, at);
    at += 4;
    if (v !== null) at += v.copy(b, at);
  }
  return b;
}

function encoderFor(a: CopyToAnalysis, fields: readonly FieldDescription[]): CopyTextEncoder {
  const o = a.options;
  const names = fields.map((f) => f.name);
  const forced = o.forceQuote === '*' ? names.map(() => true) : names.map(() => false);
  // FORCE_QUOTE names a column of the query: the first one so named, as Postgres finds it.
  if (Array.isArray(o.forceQuote))
    for (const name of o.forceQuote) {
      const i = names.indexOf(name);
      if (i >= 0) forced[i] = true;
    }
  return new CopyTextEncoder(
    {
      format: o.format === 'csv' ? 'csv' : 'text',
      delimiter: o.delimiter,
      null: o.null,
      quote: o.quote,
      escape: o.escape,
      forceQuote: forced,
    },
    fields.length,
  );
}

/** The error the client's own COPY gets from Postgres, found by the probe; undefined if none. */
export async function probeError(
  s: Session,
  r: ScatterRoute,
  a: CopyToAnalysis,
  catalog: Snapshot,
): Promise<BackendError | undefined> {
  const got = await runProbe(s, r, a, catalog);
  return got instanceof BackendError ? got : undefined;
}

/**
 * The client's COPY over no rows on one node: its CopyOutResponse and header line (whole
 * frames), or its error with the position moved back into the client's text.
 */
async function runProbe(
  s: Session,
  r: ScatterRoute,
  a: CopyToAnalysis,
  catalog: Snapshot,
): Promise<Buffer[] | BackendError> {
  const query = a.query!;
  const at = query.location - a.location;
  const sql =
    a.sql.slice(0, at) +
    PROBE_BEFORE +
    query.sql +
    PROBE_AFTER +
    a.sql.slice(at + query.sql.length);
  const node = r.nodes[0] ?? catalog.home;
  const e = await engage(s, node, catalog);
  if (s.txn.inBlock) s.txn.wrote(node, false);
  e.backend.unnamedOwner = undefined;
  const q = writeQuery(new Writer(sql.length + 16), sql).flush();
  const run = new CopyOutRun(e.backend, [...e.messages, q], e.expect.length);
  const frames: Buffer[] = [];
  try {
    run.start();
    for await (const f of run) if (f.kind !== 'complete') frames.push(f.frame);
    return frames;
  } catch (err) {
    if (!(err instanceof BackendError)) throw err;
    return new BackendError(clientPosition(err.fields, a.sql.slice(0, at), query.sql));
  } finally {
    run.abandon();
    await run.settled;
    const h = s.held.get(node);
    if (h?.backend.dead) lost(s, h.backend);
    else settle(s, node);
  }
}

/** An error position in the probe's text turned into the client's (1-based characters). */
function clientPosition(fields: NoticeFields, before: string, query: string): NoticeFields {
  if (fields.position === undefined) return fields;
  const p = Number(fields.position);
  const start = [...before].length;
  const length = [...query].length;
  let q: number;
  if (p <= start) q = p;
  else if (p <= start + PROBE_BEFORE.length) q = start + 1;
  else if (p <= start + PROBE_BEFORE.length + length) q = p - PROBE_BEFORE.length;
  else if (p <= start + PROBE_BEFORE.length + length + PROBE_AFTER.length) q = start + length;
  else q = p - PROBE_BEFORE.length - PROBE_AFTER.length;
  return { ...fields, position: String(q) };
}
