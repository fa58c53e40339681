// A question the router asks a node on the client's behalf, in the client's context: the
// session's settings, inside its transaction when one is open on a node (an error there fails
// the transaction, as the client's own statement would have), or after its deferred BEGIN and
// rolled back. Used where only Postgres can give Postgres's answer (SQL PREPARE and EXECUTE).
import {
  BackendCode,
  Writer,
  decodeDataRow,
  writeQuery,
  type NoticeFields,
} from '@tessera/pg-wire';
import { engage, pickNode, settle } from '../execute/backends.js';
import { run1 } from '../execute/run.js';
import { BackendError } from '../pool/backend.js';
import { HeldOut } from '../session/client-out.js';
import type { Session } from '../session/session.js';

const q = (sql: string): Buffer => writeQuery(new Writer(sql.length + 16), sql).flush();

/**
 * What the question is made of: `sql` runs as one Query, then `cleanup` as a Query of its own
 * (so it runs even after `sql` failed outside a transaction; its errors are not the client's).
 */
export interface Question {
  readonly sql: string;
  readonly cleanup: string;
  /**
   * Characters to add to a node's error position so it points into the client's text (the
   * question quotes part of it at another place); undefined drops the position.
   */
  readonly clientOffset: number | undefined;
}

/** The text of every column of every DataRow the question's statements returned. */
export async function askInSession(s: Session, question: Question): Promise<(string | null)[][]> {
  const snapshot = s.epoch().snapshot;
  const deferred = s.txn.phase === 'deferred';
  const node = pickNode(s, snapshot.home, true);
  const e = await engage(s, node, snapshot, !deferred);
  let at = 0;
  if (deferred) {
    // The transaction's BEGIN (and what followed it) first, so the question sees what it will.
    const prelude = s.txn.prelude.join('; ');
    at = prelude.length + 2;
    e.messages.push(q(`${prelude}; ${question.sql}`), q('ROLLBACK'));
    e.expect.push({ t: 'query', ready: false }, { t: 'quiet' });
  } else {
    e.messages.push(q(question.sql));
    e.expect.push({ t: 'query', ready: false });
  }
  e.messages.push(q(question.cleanup));
  e.expect.push({ t: 'quiet' });
  const sink = new HeldOut(true);
  let result;
  try {
    result = await run1(s, e.backend, e.messages, e.expect, false, sink);
  } finally {
    settle(s, node);
  }
  if (result.error !== undefined) throw new BackendError(inClientText(result.error, question, at));
  return dataRows(sink.pieces);
}

function inClientText(f: NoticeFields, question: Question, at: number): NoticeFields {
  if (f.position === undefined) return f;
  const { position, ...rest } = f;
  if (question.clientOffset === undefined) return rest;
  const p = Number(position) - at + question.clientOffset;
  return p > 0 ? { ...rest, position: String(p) } : rest;
}

function dataRows(pieces: readonly Buffer[]): (string | null)[][] {
  const rows: (string | null)[][] = [];
  for (const b of pieces) {
    for (let i = 0; i + 5 <= b.length;) {
      const len = b.readInt32BE(i + 1);
      if (b[i] === BackendCode.DataRow)
        rows.push(
          decodeDataRow(b.subarray(i + 5, i + 1 + len)).map((c) =>
            c === null ? null : c.toString('utf8'),
          ),
        );
      i += 1 + len;
    }
  }
  return rows;
}
