// Which isolation level a transaction runs at, as far as the router can tell from what the client
// sent: BEGIN's options, SET TRANSACTION, and the session's default (SET
// default_transaction_isolation, SET SESSION CHARACTERISTICS, startup options). A default set
// with ALTER ROLE or ALTER DATABASE on the nodes is not seen (docs/architecture.md says so).
// Only SERIALIZABLE matters: its promise cannot be kept across nodes (each node checks only its
// own part), so a serializable transaction is refused when it would span nodes.

const SERIALIZABLE = /\bserializable\b/i;
const SET_TRANSACTION = /^\s*set\s+transaction\b/i;
const READ_COMMITTED =
  /\bisolation\s+level\s+(read\s+committed|read\s+uncommitted|repeatable\s+read)\b/i;

/**
 * Whether a transaction that began with `beginSql`, ran `transactionSql` (its deferred or
 * replayed statements: SET TRANSACTION among them) and has `sessionDefault` (the SQL that set
 * the session's default isolation, if any) is SERIALIZABLE.
 */
export function isSerializable(
  beginSql: string,
  transactionSql: readonly string[],
  sessionDefault: string | undefined,
): boolean {
  let level: boolean | undefined;
  for (const sql of transactionSql) {
    if (!SET_TRANSACTION.test(sql)) continue;
    if (SERIALIZABLE.test(sql)) level = true;
    else if (READ_COMMITTED.test(sql)) level = false;
  }
  if (level !== undefined) return level;
  if (SERIALIZABLE.test(beginSql)) return true;
  if (READ_COMMITTED.test(beginSql)) return false;
  return sessionDefault !== undefined && SERIALIZABLE.test(sessionDefault);
}

export const SERIALIZABLE_ACROSS_NODES =
  'a SERIALIZABLE transaction cannot span several nodes: each node would check serializability of its own part only; keep it on one node, or use READ COMMITTED or REPEATABLE READ (docs/architecture.md)';
