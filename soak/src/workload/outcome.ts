// What an answer means for an operation (research/history-checker.md, the outcome table): `fail`
// only when the server says nothing was committed; `info` whenever the outcome cannot be known.
// Pure: the error (or warning) in, the outcome out.

export type Outcome = 'ok' | 'fail' | 'info';

/** Where the operation was when the answer came. */
export type Phase =
  /** A statement of a transaction block, COMMIT not yet sent: nothing can have committed. */
  | 'before-commit'
  /** COMMIT, or an autocommit statement (its own commit) was outstanding. */
  | 'commit';

/**
 * SQLSTATEs that say the transaction (or autocommit statement) did not commit: serialization
 * and deadlock aborts, constraint violations, data and syntax errors, refusals (0A000), a
 * failed transaction block, too many connections, authentication.
 */
export function isDefiniteFailure(code: string): boolean {
  return (
    code === '40001' ||
    code === '40P01' ||
    code === '25P02' ||
    code === '53300' ||
    code === '0A000' ||
    code.startsWith('22') ||
    code.startsWith('23') ||
    code.startsWith('42') ||
    code.startsWith('28')
  );
}

/**
 * SQLSTATEs that leave the outcome unknown: connection exceptions (08xxx, including the router's
 * 08007 "in doubt"), the server going away (57P01-57P03), 40003 (statement completion unknown).
 */
export function isUnknownOutcome(code: string): boolean {
  return (
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '40003'
  );
}

export interface ErrorFacts {
  /** SQLSTATE, when the error came from the server (or the router). */
  code?: string | undefined;
  /** The client gave up waiting (our own timeout). */
  timedOut?: boolean;
}

/** The outcome of an operation that ended with an error at `phase`. */
export function outcomeOfError(e: ErrorFacts, phase: Phase): Outcome {
  if (phase === 'before-commit') return 'fail';
  if (e.timedOut || e.code === undefined) return 'info';
  if (isUnknownOutcome(e.code)) return 'info';
  if (isDefiniteFailure(e.code)) return 'fail';
  // Anything else at the commit point (XX000, 57014, ...) is not proof that nothing committed.
  return 'info';
}

/** A commit whose answer carried a sync-replication cancel warning did not surely commit. */
export function isSyncRepWarning(notice: {
  code?: string | undefined;
  message?: string | undefined;
}): boolean {
  return notice.code === '01000' && /synchronous replication/i.test(notice.message ?? '');
}
