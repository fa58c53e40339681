// Test helper: an extended-protocol batch sent as one write (Parse/Bind/[Describe]/Execute per
// statement, then one Sync or a Flush), and what the client got back as one line per frame, so a
// test can send the same batch to the router and to a plain Postgres and compare the answers
// frame by frame (tags, rows, SQLSTATEs, ReadyForQuery status).
import {
  BackendCode,
  SYNC,
  Writer,
  decodeCommandComplete,
  decodeDataRow,
  decodeErrorResponse,
  decodeParameterDescription,
  decodeRowDescription,
  writeBind,
  writeDescribe,
  writeExecute,
  writeParse,
} from '@tessera/pg-wire';
import type { RawClient } from './raw-client.js';

export interface PipeStatement {
  readonly sql: string;
  /** Text parameters (null: SQL NULL). */
  readonly params?: readonly (string | null)[];
  /** A Describe of the portal before its Execute. */
  readonly describe?: boolean;
  /** Send `Describe` of the statement right after its Parse too. */
  readonly describeStatement?: boolean;
  /** Parse under this name (and only Bind after the first time). */
  readonly name?: string;
}

const FLUSH = Buffer.from([0x48, 0, 0, 0, 4]);

/** The messages of `statements` (named statements parsed once), ended by a Sync or a Flush. */
export function pipelineMessages(
  statements: readonly PipeStatement[],
  end: 'sync' | 'flush' = 'sync',
): Buffer {
  const parsed = new Set<string>();
  const out: Buffer[] = [];
  for (const st of statements) {
    const name = st.name ?? '';
    if (name === '' || !parsed.has(name)) {
      out.push(writeParse(new Writer(), name, st.sql, []).flush());
      if (st.describeStatement === true) out.push(writeDescribe(new Writer(), 'S', name).flush());
      parsed.add(name);
    }
    out.push(writeBind(new Writer(), { statement: name, params: [...(st.params ?? [])] }).flush());
    if (st.describe === true) out.push(writeDescribe(new Writer(), 'P', '').flush());
    out.push(writeExecute(new Writer()).flush());
  }
  out.push(end === 'sync' ? SYNC : FLUSH);
  return Buffer.concat(out);
}

/** One line per frame of an answer; DataRows as their text columns joined by `|`. */
export function frameLines(frames: readonly { code: number; body: Buffer }[]): string[] {
  return frames.map((f) => {
    switch (f.code) {
      case BackendCode.ParseComplete:
        return 'ParseComplete';
      case BackendCode.BindComplete:
        return 'BindComplete';
      case BackendCode.NoData:
        return 'NoData';
      case BackendCode.ParameterDescription:
        return `ParameterDescription ${decodeParameterDescription(f.body).join(',')}`;
      case BackendCode.RowDescription:
        return `RowDescription ${decodeRowDescription(f.body)
          .map((d) => `${d.name}:${d.typeOid}`)
          .join(',')}`;
      case BackendCode.DataRow:
        return `DataRow ${decodeDataRow(f.body)
          .map((v) => (v === null ? 'NULL' : v.toString('utf8')))
          .join('|')}`;
      case BackendCode.CommandComplete:
        return `CommandComplete ${decodeCommandComplete(f.body)}`;
      case BackendCode.ErrorResponse:
        return `Error ${decodeErrorResponse(f.body).code}`;
      case BackendCode.ReadyForQuery:
        return `ReadyForQuery ${String.fromCharCode(f.body[0]!)}`;
      case BackendCode.NoticeResponse:
        return `Notice ${decodeErrorResponse(f.body).code}`;
      default:
        return `Frame ${String.fromCharCode(f.code)}`;
    }
  });
}

/** Sends `statements` as one batch on `raw` and returns the answer's lines up to ReadyForQuery. */
export async function runPipeline(
  raw: RawClient,
  statements: readonly PipeStatement[],
): Promise<string[]> {
  raw.send(pipelineMessages(statements));
  return frameLines(await raw.until((f) => f.code === BackendCode.ReadyForQuery, 20_000));
}

/** `lines` with the DataRows of each statement sorted (for RETURNING rows in no promised order). */
export function rowsSorted(lines: readonly string[]): string[] {
  const out: string[] = [];
  let rows: string[] = [];
  for (const l of lines) {
    if (l.startsWith('DataRow ')) {
      rows.push(l);
      continue;
    }
    out.push(...rows.sort(), l);
    rows = [];
  }
  return [...out, ...rows.sort()];
}
