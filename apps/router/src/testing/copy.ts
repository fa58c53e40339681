// COPY on the bare protocol, for differential tests against one plain Postgres: every message the
// server answered is kept (its CopyOutResponse or CopyInResponse, each CopyData as sent, the tag,
// the error's fields), so a test compares exactly what a client would see.
import {
  BackendCode,
  Writer,
  decodeCommandComplete,
  decodeCopyResponse,
  decodeErrorResponse,
  writeCopyData,
  writeCopyDone,
  writeQuery,
} from '@tessera/pg-wire';
import { RawClient } from './raw-client.js';

export interface CopyAnswer {
  /** CopyOutResponse / CopyInResponse: overall format and per-column formats. */
  response?: { format: number; columns: readonly number[] };
  /** COPY TO: each CopyData's payload. */
  data: Buffer[];
  tag?: string;
  error?: {
    code: string;
    message: string;
    where?: string | undefined;
    detail?: string | undefined;
    position?: string | undefined;
  };
}

/** One Query on a fresh login; the answer up to ReadyForQuery. COPY FROM gets `chunks`. */
export async function rawCopy(
  port: number,
  sql: string,
  chunks: readonly Buffer[] = [],
  database = 'postgres',
): Promise<CopyAnswer> {
  const c = await RawClient.login(port, database);
  try {
    c.send(writeQuery(new Writer(), sql).flush());
    const answer: CopyAnswer = { data: [] };
    for (;;) {
      const frames = await c.until(
        (f) => f.code === BackendCode.ReadyForQuery || f.code === BackendCode.CopyInResponse,
        30_000,
      );
      for (const f of frames) note(answer, f);
      const last = frames[frames.length - 1]!;
      if (last.code === BackendCode.ReadyForQuery) return answer;
      const w = new Writer();
      for (const chunk of chunks) writeCopyData(w, chunk);
      writeCopyDone(w);
      c.send(w.flush());
    }
  } finally {
    c.end();
  }
}

function note(answer: CopyAnswer, f: { code: number; body: Buffer }): void {
  switch (f.code) {
    case BackendCode.CopyOutResponse:
    case BackendCode.CopyInResponse: {
      const r = decodeCopyResponse(f.body);
      answer.response = { format: r.format, columns: r.columnFormats };
      return;
    }
    case BackendCode.CopyData:
      answer.data.push(Buffer.from(f.body));
      return;
    case BackendCode.CommandComplete:
      answer.tag = decodeCommandComplete(f.body);
      return;
    case BackendCode.ErrorResponse: {
      const e = decodeErrorResponse(f.body);
      answer.error = {
        code: e.code,
        message: e.message,
        where: e.where,
        detail: e.detail,
        position: e.position,
      };
      return;
    }
  }
}

/** COPY TO output as its rows (lines, or binary tuples after the header), sorted: heap order is no order. */
export function sortedLines(data: readonly Buffer[]): string[] {
  return Buffer.concat(data)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}
