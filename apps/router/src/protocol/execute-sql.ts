// SQL EXECUTE, in both protocols, as the extended protocol's Bind of the prepared statement with
// its arguments as text values (statement/sql-prepared.ts): it routes by key and runs through
// the executor as that Bind/Execute does. A simple Query's EXECUTE is such a batch (Bind,
// Describe portal, Execute, Sync) whose BindComplete and NoData the client is not sent.
import {
  BackendCode,
  FrontendCode,
  SYNC,
  WholeFrame,
  Writer,
  writeDescribe,
  writeExecute,
} from '@tessera/pg-wire';
import type { ExecuteAnalysis } from '@tessera/sql';
import type { Session } from '../session/session.js';
import { executeBind, executeBindMessage } from '../statement/sql-prepared.js';
import { handleBatch } from './extended.js';

const DESCRIBE_PORTAL = WholeFrame.of(
  FrontendCode.Describe,
  writeDescribe(new Writer(8), 'P', '').flush(),
);
const EXECUTE_ALL = WholeFrame.of(FrontendCode.Execute, writeExecute(new Writer(16)).flush());
const SYNC_MESSAGE = WholeFrame.of(FrontendCode.Sync, SYNC);
const SIMPLE_OMITS: ReadonlySet<number> = new Set([BackendCode.BindComplete, BackendCode.NoData]);

/** A simple Query's one EXECUTE; its answer ends with the ReadyForQuery the batch's Sync gets. */
export async function runExecuteQuery(s: Session, a: ExecuteAnalysis): Promise<void> {
  const got = executeBind(s, a);
  const e = got instanceof Promise ? await got : got;
  const batch = [executeBindMessage(e, '', []), DESCRIBE_PORTAL, EXECUTE_ALL, SYNC_MESSAGE];
  s.out.omit = SIMPLE_OMITS;
  try {
    await handleBatch(s, batch);
  } finally {
    s.out.omit = undefined;
  }
  // A Query ends the unnamed portal, as in Postgres.
  s.portals.delete('');
}
