// Runs one statement through the extended protocol on a raw connection and keeps the answer as
// bytes: the RowDescription's fields, every DataRow body (hex), the tag or the error. Differential
// tests of result formats compare these byte for byte between the router and plain Postgres.
import {
  BackendCode,
  FLUSH,
  SYNC,
  Writer,
  decodeCommandComplete,
  decodeErrorResponse,
  decodeRowDescription,
  writeBind,
  writeDescribe,
  writeExecute,
  writeParse,
  writeQuery,
} from '@tessera/pg-wire';
import { RawClient } from './raw-client.js';

export interface ExtendedRun {
  readonly sql: string;
  readonly params?: readonly (Buffer | string | null)[];
  /** The Parse's parameter types (0: the server infers). */
  readonly paramTypes?: readonly number[];
  readonly paramFormats?: readonly number[];
  readonly resultFormats?: readonly number[];
  /** Describe the portal in a round trip of its own, before its Execute. */
  readonly describeApart?: boolean;
}

/** A column as both sides must describe it (table OIDs differ between servers). */
export interface Column {
  readonly name: string;
  readonly typeOid: number;
  readonly typeSize: number;
  readonly typeModifier: number;
  readonly format: number;
}

export interface Answer {
  readonly columns?: readonly Column[];
  /** DataRow bodies, hex. */
  readonly rows: readonly string[];
  readonly tag?: string;
  /** `SQLSTATE message` of an ErrorResponse. */
  readonly error?: string;
}

type Frame = { code: number; body: Buffer };

function answerOf(frames: readonly Frame[]): Answer {
  let columns: Column[] | undefined;
  const rows: string[] = [];
  let tag: string | undefined;
  let error: string | undefined;
  for (const f of frames)
    switch (f.code) {
      case BackendCode.RowDescription:
        columns = decodeRowDescription(f.body).map((c) => ({
          name: c.name,
          typeOid: c.typeOid,
          typeSize: c.typeSize,
          typeModifier: c.typeModifier,
          format: c.format,
        }));
        break;
      case BackendCode.DataRow:
        rows.push(f.body.toString('hex'));
        break;
      case BackendCode.CommandComplete:
        tag = decodeCommandComplete(f.body);
        break;
      case BackendCode.ErrorResponse: {
        const e = decodeErrorResponse(f.body);
        error ??= `${e.code} ${e.message}`;
        break;
      }
      default:
        break;
    }
  return { columns, rows, tag, error };
}

const isReady = (f: Frame): boolean => f.code === BackendCode.ReadyForQuery;

/** A simple Query, its answer. */
export async function simpleQuery(c: RawClient, sql: string): Promise<Answer> {
  c.send(writeQuery(new Writer(sql.length + 16), sql).flush());
  return answerOf(await c.until(isReady, 20_000));
}

export async function runExtended(c: RawClient, run: ExtendedRun): Promise<Answer> {
  const w = new Writer(run.sql.length + 256);
  writeParse(w, '', run.sql, run.paramTypes ?? []);
  writeBind(w, {
    paramFormats: run.paramFormats ?? [],
    params: run.params ?? [],
    resultFormats: run.resultFormats ?? [],
  });
  writeDescribe(w, 'P', '');
  if (run.describeApart === true) {
    c.send(w.bytes(FLUSH).flush());
    const first = await c.until(
      (f) =>
        f.code === BackendCode.RowDescription ||
        f.code === BackendCode.NoData ||
        f.code === BackendCode.ErrorResponse,
      20_000,
    );
    c.send(writeExecute(new Writer(32)).bytes(SYNC).flush());
    return answerOf([...first, ...(await c.until(isReady, 20_000))]);
  }
  writeExecute(w);
  c.send(w.bytes(SYNC).flush());
  return answerOf(await c.until(isReady, 20_000));
}

/** Logs in as postgres on `port` (trust), with each of `settings` SET for the session. */
export async function rawSession(port: number, settings: readonly string[]): Promise<RawClient> {
  const c = await RawClient.login(port);
  for (const s of settings) {
    const a = await simpleQuery(c, s);
    if (a.error !== undefined) throw new Error(`${s}: ${a.error}`);
  }
  return c;
}
