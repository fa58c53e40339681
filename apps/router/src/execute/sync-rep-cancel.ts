// A cancelled wait for the synchronous replica is not a success (research/failover.md 3.2 #5).
// When a backend waiting for its commit to reach the synchronous standby is cancelled, Postgres
// sends WARNING "canceling wait for synchronous replication due to user request" and then the
// statement's CommandComplete (COMMIT, INSERT 0 1, ...), or, when the commit comes at Sync, the
// ReadyForQuery: committed locally, maybe not on the replica, so a failover could lose it. The
// exchange answers 08007 (transaction resolution unknown) instead of the success; the warning
// itself still reaches the client. The router's own statements (quiet) get it as their error.
import {
  BackendCode,
  decodeNoticeResponse,
  type FrameReader,
  type NoticeFields,
} from '@tessera/pg-wire';
import { errorFrame } from '../session/errors-wire.js';

export const TRANSACTION_RESOLUTION_UNKNOWN = '08007';

/**
 * The node's message, in English (the router's backends log in with the server's lc_messages;
 * docs/operations.md asks for C or English there).
 */
const CANCELLED_WAIT = 'canceling wait for synchronous replication';

/** Whether a NoticeResponse body is Postgres' warning that a sync-rep wait was cancelled. */
export function isSyncRepCancelNotice(body: Buffer): boolean {
  let fields: NoticeFields;
  try {
    fields = decodeNoticeResponse(body);
  } catch {
    return false;
  }
  const severity = fields.severityNonLocalized ?? fields.severity;
  return severity === 'WARNING' && fields.message.startsWith(CANCELLED_WAIT);
}

/** What the client gets instead of the success of a commit whose replication is unknown. */
export function unknownOutcomeFields(node: string): NoticeFields {
  return {
    severity: 'ERROR',
    code: TRANSACTION_RESOLUTION_UNKNOWN,
    message: `the commit on node "${node}" was cancelled while it waited for the synchronous replica: it is committed on the primary but may not be on the replica, so its outcome is unknown`,
    detail:
      'Postgres reported "canceling wait for synchronous replication"; the change may be visible now and lost by a failover. Check for it before retrying.',
  };
}

/** The parts of an exchange (execute/exchange.ts) this looks at and changes. */
export interface SyncRepExchange {
  syncRepCancelled: boolean;
  readonly result: {
    error: NoticeFields | undefined;
    errorAt: number | undefined;
    quietError: NoticeFields | undefined;
  };
  readonly head: number;
  readonly backend: { readonly target: { readonly node: string } };
  readonly hooks: { onError(sqlstate: string): void };
  emit(b: Buffer): void;
}

/**
 * Called for every NoticeResponse, and for every frame once the warning came. At the statement's
 * CommandComplete (or the ReadyForQuery, when the commit came at Sync, as a commit-time error at
 * Sync looks in Postgres) the client gets 08007. True when that replaced the CommandComplete
 * (the statement's expectation is met: the node goes on as after a success); otherwise the frame
 * is handled as usual.
 */
export function syncRepFrame(
  x: SyncRepExchange,
  code: number,
  reader: FrameReader,
  quiet: boolean,
): boolean {
  if (code === BackendCode.NoticeResponse) {
    if (isSyncRepCancelNotice(reader.frameBody())) x.syncRepCancelled = true;
    return false;
  }
  if (code !== BackendCode.CommandComplete && code !== BackendCode.ReadyForQuery) return false;
  x.syncRepCancelled = false;
  const fields = unknownOutcomeFields(x.backend.target.node);
  if (quiet) {
    x.result.quietError ??= fields;
    return false;
  }
  if (x.result.error === undefined) {
    x.result.error = fields;
    x.result.errorAt = x.head;
  }
  x.hooks.onError(fields.code);
  x.emit(errorFrame(fields));
  return code === BackendCode.CommandComplete;
}
