// The vocabulary of the transaction machine (machine.ts): a node's part and its status, the
// phases, what a node needs before a statement runs there, what a backend's status did.
import type { TransactionStatus } from '@tessera/pg-wire';

/** What a node's backend last reported (ReadyForQuery), or 'lost' once its connection is gone. */
export type PartStatus = TransactionStatus | 'lost';

/** One node's part of the transaction. */
export interface TxnPart {
  /** Conservatively true once any statement other than a plain read ran there. */
  written: boolean;
  /** The catalog epoch the part's first write was admitted under (admit/: Held rules). */
  firstWriteEpoch: bigint | undefined;
  /** A statement naming a table ran there (a SERIALIZABLE transaction may touch one node only). */
  touched: boolean;
}

/**
 * `idle`: no transaction block. `deferred`: BEGIN answered by the router, no node picked yet.
 * `one`: open on one node, which answers transaction control itself. `cross`: open on several
 * nodes, or one part was lost: the router answers transaction control (two-phase.ts).
 */
export type TxnPhase = 'idle' | 'deferred' | 'one' | 'cross';

/** What a statement about to run on a node needs first, so that it runs inside the transaction. */
export type Entry =
  /** Not in a transaction block (or no node needed): nothing. */
  | { readonly kind: 'none' }
  /** The node holds a part already. */
  | { readonly kind: 'member' }
  /** Run `sql` first (BEGIN and what followed it); then, if `poison`, fail the node's part. */
  | { readonly kind: 'join'; readonly sql: string; readonly poison: boolean }
  /** The replay no longer matches what the nodes did: the node cannot join. */
  | { readonly kind: 'uncertain' };

/** What a backend's status after an exchange did to the transaction. */
export type Settled =
  /** Nothing changed (not a part, or still inside the transaction). */
  | 'none'
  /** The one part's COMMIT or ROLLBACK ended the transaction. */
  | 'ended'
  /** A part ended on its own while others are open: it can no longer commit with them. */
  | 'broke'
  /** The client's own text began a transaction on this node (BEGIN in a multi-statement query). */
  | 'began'
  /** The client's own text made this node part of the open transaction. */
  | 'joined';

/** A savepoint and the session settings when it was made (ROLLBACK TO restores them). */
export interface Savepoint<S> {
  readonly name: string;
  readonly settings: S;
}
