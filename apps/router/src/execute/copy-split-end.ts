// How a COPY FROM split over nodes ends when a node fails: the COPY is ended everywhere, and the
// client gets the error Postgres would have given it, the one of the first bad row of its data,
// with the CONTEXT's line number counted in the client's stream rather than the node's part.
import { Writer, writeCopyFail, type NoticeFields } from '@tessera/pg-wire';
import { RouterError, SQLSTATE } from '../errors.js';
import { BackendError, type Backend } from '../pool/backend.js';
import type { ExchangeResult } from './exchange.js';

/** One node's part of a COPY FROM split over nodes. */
export interface Target {
  readonly node: string;
  readonly backend: Backend;
  done: Promise<ExchangeResult>;
  ready: Promise<void>;
  pieces: Buffer[];
  size: number;
  result: ExchangeResult | undefined;
  /** The node's COPY failed on its own (not because the router ended it). */
  failed: boolean;
  /** The client's line number of each row sent to this node, in order (split COPY only). */
  lines: number[] | undefined;
  /** Lines sent before the rows: a CSV header (the binary header is no line). */
  headerLines: number;
}

const copyFail = (reason: string): Buffer => writeCopyFail(new Writer(64), reason).flush();

/** A node failed: end the COPY everywhere and pass on the error of the client's first bad row. */
export async function abort(targets: readonly Target[], reason: string): Promise<Error> {
  const failed = targets.filter((t) => t.failed);
  for (const t of targets) if (!t.failed) t.backend.write(copyFail(reason));
  await Promise.allSettled(targets.map((t) => t.done));
  return (
    firstError(failed) ??
    firstError(targets) ??
    new RouterError(SQLSTATE.connectionFailure, `COPY failed: ${reason}`)
  );
}

/**
 * The error of `targets` that Postgres, reading the client's stream in order, would have met
 * first: the smallest client line (an error without one counts as line 0).
 */
export function firstError(targets: readonly Target[]): BackendError | undefined {
  let best: { line: number; fields: NoticeFields } | undefined;
  for (const t of targets) {
    const err = t.result?.error ?? t.result?.quietError;
    if (err === undefined) continue;
    const fields = clientContext(t, err);
    const m = fields.where === undefined ? null : COPY_LINE.exec(fields.where);
    const line = m === null ? 0 : Number(m[2]);
    if (best === undefined || line < best.line) best = { line, fields };
  }
  return best === undefined ? undefined : new BackendError(best.fields);
}

/**
 * A node's error with its CONTEXT's line number turned into the client's: the node counts the
 * lines of its part of the stream (`COPY t, line 3, column id: "x"`), the client all of them.
 */
function clientContext(t: Target, fields: NoticeFields): NoticeFields {
  const where = fields.where;
  const lines = t.lines;
  if (where === undefined || lines === undefined) return fields;
  const m = COPY_LINE.exec(where);
  if (m === null) return fields;
  const nodeLine = Number(m[2]);
  const header = t.headerLines;
  const line = nodeLine <= header ? nodeLine : lines[nodeLine - header - 1];
  if (line === undefined) return fields;
  return { ...fields, where: where.replace(COPY_LINE, `$1${line}`) };
}

/** The line number in the CONTEXT of an error in COPY FROM data (copyfrom.c CopyFromErrorCallback). */
const COPY_LINE = /^(COPY [^\n]*?, line )(\d+)/;
