// What the client is owed for each message of a round to a backend (execute/exchange.ts matches
// the backend's frames against these, in order).

export type Expectation =
  /** A client Query: everything up to ReadyForQuery goes to the client, the ReadyForQuery if `ready`. */
  | { readonly t: 'query'; readonly ready: boolean }
  /** The router's own Query (BEGIN, settings replay, poison): everything swallowed. */
  | { readonly t: 'quiet' }
  /** One reply frame (ParseComplete, BindComplete, CloseComplete); `forward` false for the router's own Parse. */
  | { readonly t: 'one'; readonly forward: boolean; readonly unprepare?: string }
  /**
   * Describe of a statement: ParameterDescription then RowDescription or NoData; `noParams`: the
   * ParameterDescription is not the client's (that of an SQL EXECUTE's statement, which has none).
   */
  | { readonly t: 'describe_s'; readonly noParams?: boolean }
  /** Describe of a portal: RowDescription or NoData. */
  | { readonly t: 'describe_p' }
  /** Execute: rows until CommandComplete, PortalSuspended or EmptyQueryResponse. */
  | { readonly t: 'execute' }
  /** Sync: ReadyForQuery (`own`: the router's Sync, whose ReadyForQuery the client does not see). */
  | { readonly t: 'sync'; readonly own?: boolean }
  /** The router's own failing Execute standing in for a refused statement: its error becomes `bytes`. */
  | { readonly t: 'poison'; readonly bytes: Buffer }
  /** Frames the router makes up, sent when they reach the head. */
  | { readonly t: 'synthetic'; readonly bytes: Buffer };

// Expectations with no per-message state: one object each, shared by every batch.
export const EXPECT_ONE: Expectation = { t: 'one', forward: true };
export const EXPECT_DESCRIBE_STATEMENT: Expectation = { t: 'describe_s' };
export const EXPECT_DESCRIBE_PORTAL: Expectation = { t: 'describe_p' };
export const EXPECT_EXECUTE: Expectation = { t: 'execute' };
export const EXPECT_SYNC: Expectation = { t: 'sync' };
export const EXPECT_OWN_SYNC: Expectation = { t: 'sync', own: true };
