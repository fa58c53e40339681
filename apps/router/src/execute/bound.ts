// A client's Bind of a statement the router runs on several nodes (extended protocol): each node
// gets the statement as an unnamed Parse with the client's parameter types, then the client's
// values and formats (all of them, or the part's own for a split INSERT, renumbered), its result
// formats, and the router's own Sync (the statement runs inside a transaction, which a Sync does
// not end).
import {
  SYNC,
  Writer,
  decodeBind,
  writeBind,
  writeDescribe,
  writeExecute,
  writeParse,
} from '@tessera/pg-wire';
import {
  EXPECT_DESCRIBE_PORTAL,
  EXPECT_EXECUTE,
  EXPECT_OWN_SYNC,
  type Expectation,
} from './expectations.js';

/** What a Bind carried, kept (copied) until its Execute. */
export interface BoundValues {
  /** The types the client's Parse declared, by parameter (0 or missing: the node infers it). */
  readonly types: readonly number[];
  /** One format per value: 0 text, 1 binary. */
  readonly formats: readonly number[];
  readonly values: readonly (Buffer | null)[];
  readonly resultFormats: readonly number[];
}

/** The values of the client's Bind `body` of a statement whose Parse declared `types`. */
export function boundValues(body: Buffer, types: readonly number[]): BoundValues {
  const b = decodeBind(body);
  const n = b.paramFormats.length;
  return {
    types,
    formats: b.params.map((_, i) => (n === 0 ? 0 : (b.paramFormats[n === 1 ? 0 : i] ?? 0))),
    // The Bind is a view of the client's read buffer: copied, it outlives the batch.
    values: b.params.map((v) => (v === null ? null : Buffer.from(v))),
    resultFormats: [...b.resultFormats],
  };
}

/** The values a statement renumbered from the client's gets: `$k+1` is the client's `indexes[k]`. */
export function subsetOf(v: BoundValues, indexes: readonly number[]): BoundValues {
  return {
    types: indexes.map((i) => v.types[i] ?? 0),
    formats: indexes.map((i) => v.formats[i] ?? 0),
    values: indexes.map((i) => v.values[i] ?? null),
    resultFormats: v.resultFormats,
  };
}

const OWN_PARSE: Expectation = { t: 'one', forward: false };

/**
 * The messages that run `sql` with `v` as the unnamed statement and portal, and what the router
 * expects of them (ParseComplete and BindComplete swallowed: the client had its own at its Bind);
 * `describe`: a Describe of the portal first, so the answer leads with its RowDescription or NoData.
 */
export function boundRun(
  sql: string,
  v: BoundValues,
  describe: boolean,
): { messages: Buffer[]; expect: Expectation[] } {
  const messages = [
    writeParse(new Writer(sql.length + 64), '', sql, v.types).flush(),
    writeBind(new Writer(256), {
      paramFormats: v.formats,
      params: v.values,
      resultFormats: v.resultFormats,
    }).flush(),
  ];
  const expect: Expectation[] = [OWN_PARSE, OWN_PARSE];
  if (describe) {
    messages.push(writeDescribe(new Writer(16), 'P', '').flush());
    expect.push(EXPECT_DESCRIBE_PORTAL);
  }
  messages.push(writeExecute(new Writer(16)).flush(), SYNC);
  expect.push(EXPECT_EXECUTE, EXPECT_OWN_SYNC);
  return { messages, expect };
}
