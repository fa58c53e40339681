// The errors a cross-node commit ends with, each carrying the SQLSTATE the router sends to the
// client (STYLE.md principle 9: typed inside, converted at the wire edge). A failed PREPARE is not
// wrapped: the node's own error (23505 from a deferred unique check, ...) is what the client sees.

/** Base of the errors commitAcrossNodes raises itself. */
export abstract class TwoPhaseError extends Error {
  abstract readonly sqlstate: string;
  constructor(
    message: string,
    readonly txid: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Every node prepared but the decision could not be logged (the coordinator did not answer, or
 * answered with an error): it may or may not have been logged, so nothing is rolled back and the
 * coordinator's recovery settles the outcome. 08007 is Postgres' "transaction resolution unknown".
 */
export class InDoubtError extends TwoPhaseError {
  override readonly name = 'InDoubtError';
  readonly sqlstate = '08007';
  /** The node names that hold a prepared transaction for this txid. */
  readonly participants: readonly string[];
  constructor(txid: string, participants: readonly string[], cause: unknown) {
    super(
      `the outcome of transaction ${txid} is unknown: every node prepared it but the coordinator could not log the decision (${describe(cause)}); recovery will commit or roll it back`,
      txid,
      { cause },
    );
    this.participants = participants;
  }
}

/**
 * The log already held an abort for this txid (recovery gave up on it, or an operator resolved it),
 * or this commit took too long to be allowed to decide commit; it was rolled back everywhere.
 * 40001 tells drivers and ORMs the transaction may simply be retried.
 */
export class CommitAbortedError extends TwoPhaseError {
  override readonly name = 'CommitAbortedError';
  readonly sqlstate = '40001';
  constructor(txid: string, reason: string) {
    super(
      `transaction ${txid} was rolled back on every node: ${reason}; it is safe to retry it`,
      txid,
    );
  }
}

/**
 * The decision was commit, but some node did not confirm COMMIT PREPARED in time (it is down or
 * unreachable): the transaction is committed and the coordinator's recovery finishes it there, but
 * until then its changes on that node are not visible. The client is not told "COMMIT" (it could
 * then read its own write's absence); 08007 says it cannot rely on the outcome being visible.
 */
export class CommitUnfinishedError extends TwoPhaseError {
  override readonly name = 'CommitUnfinishedError';
  readonly sqlstate = '08007';
  /** The node names that still hold the prepared transaction. */
  readonly nodes: readonly string[];
  constructor(
    txid: string,
    unfinished: readonly { node: string; error: unknown }[],
    timeoutMs: number,
  ) {
    const nodes = unfinished.map((u) => u.node);
    super(
      `transaction ${txid} is committed, but node${nodes.length > 1 ? 's' : ''} ${nodes.map((n) => `"${n}"`).join(', ')} did not confirm COMMIT PREPARED within ${timeoutMs} ms (${describe(unfinished[0]?.error)}); recovery finishes it there, and until then its changes on that node are not visible`,
      txid,
      { cause: unfinished[0]?.error },
    );
    this.nodes = nodes;
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
