// Formats at the edge of a read across nodes: the RowDescription a portal's Bind asked for, and
// the client's binary parameters the router itself reads (LIMIT / OFFSET), checked as Postgres's
// receive functions check them at Bind.
import { formatOf, type FieldDescription } from '@tessera/merge';
import type { PlanNode, ReadPlan } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import type { BindValues } from '../statement/portal.js';

const SQLSTATE_INVALID_BINARY_REPRESENTATION = '22P03';

/**
 * A portal's columns with the formats its Bind asked (a Describe of a portal reports them).
 * Postgres refuses a count that fits no column list at Bind; the router, which learns the columns
 * later, at the Describe or Execute.
 */
export function withFormats(
  fields: readonly FieldDescription[],
  formats: readonly number[],
): FieldDescription[] {
  if (formats.length > 1 && formats.length !== fields.length)
    throw new RouterError(
      SQLSTATE.protocolViolation,
      `bind message has ${formats.length} result formats but query has ${fields.length} columns`,
    );
  return fields.map((f, i) => ({ ...f, format: formatOf(formats, i) }));
}

/** The client parameters a Limit of the plan reads (0-based). */
function limitParams(node: PlanNode, out = new Set<number>()): Set<number> {
  if (node.kind === 'limit')
    for (const v of [node.count, node.offset]) if (v?.kind === 'param') out.add(v.index);
  if (node.kind !== 'scatter') limitParams(node.input, out);
  return out;
}

/** int8recv / int4recv / int2recv of a LIMIT or OFFSET value, as its decimal text. */
function binaryInteger(v: Buffer, type: number, index: number): string {
  // An unspecified type is the one Postgres infers for LIMIT $n: bigint.
  const bytes = type === 0 || type === 20 ? 8 : type === 23 ? 4 : type === 21 ? 2 : undefined;
  if (bytes === undefined)
    throw unsupported(
      `a binary LIMIT or OFFSET parameter of type OID ${type} is not supported across nodes`,
    );
  if (v.length < bytes)
    throw new RouterError(SQLSTATE.protocolViolation, 'insufficient data left in message');
  if (v.length > bytes)
    throw new RouterError(
      SQLSTATE_INVALID_BINARY_REPRESENTATION,
      `incorrect binary data format in bind parameter ${index + 1}`,
    );
  if (bytes === 8) return v.readBigInt64BE(0).toString();
  return String(bytes === 4 ? v.readInt32BE(0) : v.readInt16BE(0));
}

/**
 * The client's parameters as the executor reads them (LIMIT / OFFSET): text as it came, a binary
 * integer as its decimal text. Parameters the nodes take are theirs to check.
 */
export function executorParams(plan: ReadPlan, bind: BindValues): (string | Buffer | null)[] {
  const read = limitParams(plan.root);
  return bind.values.map((v, i) =>
    v === null || bind.formats[i] !== 1 || !read.has(i)
      ? v
      : binaryInteger(v, bind.types[i] ?? 0, i),
  );
}
