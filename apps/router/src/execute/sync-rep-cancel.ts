// A cancelled wait for the synchronous replica is not a success (research/failover.md 3.2 #5).
// When a backend waiting for its commit to reach the synchronous standby is cancelled, Postgres
// sends WARNING "canceling wait for synchronous replication due to user request" and then the
// statement's CommandComplete (COMMIT, INSERT 0 1, ...), or, when the commit comes at Sync, the
// ReadyForQuery: committed locally, maybe not on the replica, so a failover could lose it. The
// router (execute/exchange.ts) answers 08007 (transaction resolution unknown) instead of the
// success; the warning itself still reaches the client.
import { decodeNoticeResponse, type NoticeFields } from '@tessera/pg-wire';

export const TRANSACTION_RESOLUTION_UNKNOWN = '08007';

/**
 * The node's message, in English (the router's backends log in with the server's lc_messages;
 * a server configured for another language is documented in docs/operations.md).
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

/** What the client gets instead of the CommandComplete of a commit whose replication is unknown. */
export function unknownOutcomeFields(node: string): NoticeFields {
  return {
    severity: 'ERROR',
    code: TRANSACTION_RESOLUTION_UNKNOWN,
    message: `the commit on node "${node}" was cancelled while it waited for the synchronous replica: it is committed on the primary but may not be on the replica, so its outcome is unknown`,
    detail:
      'Postgres reported "canceling wait for synchronous replication"; the change may be visible now and lost by a failover. Check for it before retrying.',
  };
}
