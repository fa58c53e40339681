// The router's own catalog questions to a node, outside any client's statement: one extended-
// protocol query on an idle backend, its rows as text. Not on the statement path's hot side:
// asked once per login (session/names.ts) or once per table and epoch (sequences/columns.ts).
import {
  BackendCode,
  SYNC,
  Writer,
  decodeDataRow,
  decodeErrorResponse,
  writeBind,
  writeExecute,
  writeParse,
} from '@tessera/pg-wire';
import { BackendError, type Backend } from './backend.js';

/** Text of each column of each row (null for NULL). Rejects with the node's error. */
export function queryText(
  backend: Backend,
  sql: string,
  params: readonly string[],
  timeoutMs: number,
): Promise<(string | null)[][]> {
  return new Promise((resolve, reject) => {
    const rows: (string | null)[][] = [];
    let error: Error | undefined;
    const timer = setTimeout(() => {
      backend.destroy('catalog query timed out');
      done(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    let finished = false;
    const done = (e?: Error): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      backend.detach();
      // The unnamed statement now holds this query, not any client's.
      backend.unnamedOwner = undefined;
      if (e) reject(e);
      else resolve(rows);
    };
    backend.attach({
      onReadable: () => {
        try {
          for (let f = backend.nextFrame(); f; f = backend.nextFrame()) {
            switch (f.code) {
              case BackendCode.DataRow:
                rows.push(
                  decodeDataRow(f.body).map((c) => (c === null ? null : c.toString('utf8'))),
                );
                break;
              case BackendCode.ErrorResponse:
                error ??= new BackendError(decodeErrorResponse(f.body));
                break;
              case BackendCode.ReadyForQuery:
                return done(error);
              default:
                break;
            }
          }
        } catch (e) {
          done(e as Error);
        }
      },
      onClosed: (_b, e) => done(e ?? new Error('the node closed the connection')),
    });
    const w = new Writer(512);
    writeParse(w, '', sql);
    writeBind(w, { params: [...params] });
    writeExecute(w);
    w.bytes(SYNC);
    backend.write(w.flush());
  });
}
