// The executor's seam (owned here, STYLE principle 5): per participating node, an async iterable of
// that node's result for the leaf SQL, in the protocol's own vocabulary (RowDescription, DataRow,
// CommandComplete), each column in the format the leaf's Bind asked (leafResultFormats). The output
// is the same vocabulary for the client, in the formats the client's Bind asked.

/** One column of a RowDescription, as the wire carries it. */
export interface FieldDescription {
  readonly name: string;
  readonly tableOid: number;
  readonly columnAttr: number;
  readonly typeOid: number;
  readonly typeSize: number;
  readonly typeModifier: number;
  /** 0 text, 1 binary: how this column's values are encoded. */
  readonly format: number;
}

/** A DataRow's column values, each in its field's format; null for SQL NULL. */
export type Row = readonly (Buffer | null)[];

export type LeafMessage =
  | { readonly kind: 'RowDescription'; readonly fields: readonly FieldDescription[] }
  | { readonly kind: 'DataRow'; readonly values: Row }
  | { readonly kind: 'CommandComplete'; readonly tag: string };

/**
 * One node's result: RowDescription first, then DataRows, then CommandComplete. A node's error is
 * thrown from its iterator and propagates as-is. The executor calls `return()` on every leaf
 * iterator when it no longer needs it (finished, LIMIT reached, another leaf failed, client gone),
 * which is the router's cue to cancel that node's query if it is still running.
 */
export type LeafStream = AsyncIterable<LeafMessage>;

/** One stream per participating node; the order is only used to break ties deterministically. */
export type LeafStreams = readonly LeafStream[];

export type ResultMessage =
  | { readonly kind: 'RowDescription'; readonly fields: readonly FieldDescription[] }
  | { readonly kind: 'DataRow'; readonly values: Row }
  | { readonly kind: 'CommandComplete'; readonly tag: string; readonly rowCount: number };

/** RowDescription, DataRows, CommandComplete (`SELECT n`); errors are thrown from the iterator. */
export type ResultStream = AsyncIterable<ResultMessage>;

export interface ExecuteOptions {
  /**
   * The client's bind parameters, text format (0-based). Only those a Limit names are read; a
   * binary-format parameter must be given as its decimal text by the router.
   */
  readonly params?: readonly (string | Buffer | null)[];
  /**
   * The client's Bind result formats (none: all text; one: every column; else one per column).
   * The leaves must have been asked for `leafResultFormats(plan, resultFormats)`.
   */
  readonly resultFormats?: readonly number[];
}

/** A pull-based row stream between primitives; `close()` stops it early and is idempotent. */
export interface RowSource {
  readonly fields: readonly FieldDescription[];
  next(): Promise<Row | undefined>;
  close(): Promise<void>;
}
