// Result formats of a read across nodes. The client's Bind names a format per output column (none:
// all text; one: all columns; else one each). The nodes are asked for text only where the client
// wants text and the column passes a node's bytes on unchanged; every other column comes in
// binary (which the merge decodes exactly, whatever DateStyle or extra_float_digits say). What the
// router computes is text until ClientFormatSource, the last step, encodes it as the client asked.
import type { PlanNode, ReadPlan } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import { binaryEncoder } from './encode.js';
import type { Encoder } from './encode.js';
import { typeName } from './oids.js';
import { MergeError, unsupported } from './errors.js';

const SQLSTATE_PROTOCOL_VIOLATION = '08P01';
const SQLSTATE_INVALID_PARAMETER_VALUE = '22023';
/** MaxTupleAttributeNumber. */
const MAX_COLUMNS = 1664;

interface Trace {
  /** The leaf's column count, when the plan knows it. */
  readonly leafWidth: number | undefined;
  /** Per output column: the leaf column whose bytes it passes on unchanged, if any. */
  readonly origins: readonly (number | undefined)[];
}

function leafColumn(index: number, leafWidth: number | undefined): number | undefined {
  if (index >= 0) return index;
  return leafWidth === undefined ? undefined : leafWidth + index;
}

/** The number of columns `node` gives, when the plan says (a `*` leaves it to the nodes). */
export function outputWidth(node: PlanNode): number | undefined {
  switch (node.kind) {
    case 'scatter':
      return node.columnCount;
    case 'merge_sort':
      return node.input.columnCount;
    case 'aggregate':
    case 'compute':
      return node.columns.length;
    case 'count_rows':
      return 1;
    case 'project': {
      const w = outputWidth(node.input);
      return w === undefined ? undefined : w - node.dropTrailing;
    }
    default:
      return outputWidth(node.input);
  }
}

function trace(node: PlanNode, width: number): Trace {
  switch (node.kind) {
    case 'scatter': {
      // A `*` leaf is as wide as what is asked of it (the client's count, checked by the node).
      const leafWidth = node.columnCount ?? width;
      return {
        leafWidth,
        origins: Array.from({ length: width }, (_, i) => (i < leafWidth ? i : undefined)),
      };
    }
    case 'merge_sort':
      return trace(node.input, width);
    case 'project': {
      const inner = trace(node.input, width + node.dropTrailing);
      return { leafWidth: inner.leafWidth, origins: inner.origins.slice(0, width) };
    }
    case 'aggregate': {
      const leafWidth = node.input.columnCount;
      const origins = node.columns.map((c) => {
        if (c.kind === 'value') return leafColumn(c.input, leafWidth);
        // min / max pass the winning node value on as it came.
        const input = c.kind === 'aggregate' ? c.inputs[0] : undefined;
        if (c.kind === 'aggregate' && (c.fn === 'min' || c.fn === 'max') && input !== undefined)
          return leafColumn(input, leafWidth);
        return undefined;
      });
      return { leafWidth, origins };
    }
    case 'compute': {
      const inner = trace(node.input, outputWidth(node.input) ?? 0);
      const origins = node.columns.map((c) =>
        c.kind === 'input' ? inner.origins[c.index] : undefined,
      );
      return { leafWidth: inner.leafWidth, origins };
    }
    case 'count_rows': {
      const inner = trace(node.input, outputWidth(node.input) ?? 0);
      return { leafWidth: inner.leafWidth, origins: [undefined] };
    }
    default:
      return trace(node.input, width);
  }
}

/**
 * The result formats for the leaf's Bind, in the Bind's own form: [] (all text), [1] (all
 * binary) or one per leaf column. `clientFormats` is the client's Bind.
 */
export function leafResultFormats(plan: ReadPlan, clientFormats: readonly number[]): number[] {
  if (clientFormats.every((f) => f === 0)) return [];
  if (clientFormats.length === 1) return [1];
  const width = outputWidth(plan.root);
  if (width !== undefined && width !== clientFormats.length)
    throw formatCount(clientFormats, width);
  const { leafWidth, origins } = trace(plan.root, clientFormats.length);
  const text = new Set<number>();
  for (const [i, o] of origins.entries())
    if (o !== undefined && clientFormats[i] === 0) text.add(o);
  if (text.size === 0) return [1];
  // Without the leaf's width (or past Postgres's column limit, a client's count that fits no
  // query) no list can be made: all text, and the router encodes what it can or says why not.
  if (leafWidth === undefined || leafWidth > MAX_COLUMNS) return [];
  return Array.from({ length: leafWidth }, (_, c) => (text.has(c) ? 0 : 1));
}

function formatCount(clientFormats: readonly number[], columns: number): MergeError {
  return new MergeError(
    SQLSTATE_PROTOCOL_VIOLATION,
    `bind message has ${clientFormats.length} result formats but query has ${columns} columns`,
  );
}

/** The format the client's Bind gives column `i`. */
export function formatOf(clientFormats: readonly number[], i: number): number {
  if (clientFormats.length === 0) return 0;
  return clientFormats[clientFormats.length === 1 ? 0 : i] ?? 0;
}

/**
 * Each column in the format the client asked for. A column the router holds as text (a value it
 * computed, or a node's text) is encoded as the type's send function would; one it cannot encode
 * exactly is refused here, before any row is sent. An unknown format code fails the first row, as
 * Postgres's printtup does (a result without rows never sees it).
 */
export class ClientFormats {
  /** The columns as the client is told of them (RowDescription). */
  readonly fields: readonly FieldDescription[];
  private readonly encoders: readonly (Encoder | undefined)[];
  private readonly badCode: number | undefined;
  /** Whether rows go out as they come (every column already in the client's format). */
  readonly unchanged: boolean;

  constructor(input: readonly FieldDescription[], clientFormats: readonly number[]) {
    const n = input.length;
    if (clientFormats.length > 1 && clientFormats.length !== n) throw formatCount(clientFormats, n);
    this.fields = input.map((f, i) => {
      const format = formatOf(clientFormats, i);
      return format === f.format ? f : { ...f, format };
    });
    this.badCode = this.fields.find((f) => f.format !== 0 && f.format !== 1)?.format;
    this.encoders = input.map((f, i) => {
      const want = this.fields[i]?.format;
      if (want === f.format || this.badCode !== undefined) return undefined;
      const encoder = want === 1 ? binaryEncoder(f.typeOid) : undefined;
      if (encoder === undefined)
        throw unsupported(
          `column "${f.name}" of type ${typeName(f.typeOid)} cannot be sent in ${want === 1 ? 'binary' : 'text'} from a read across nodes here; ask for it in ${want === 1 ? 'text' : 'binary'}`,
        );
      return encoder;
    });
    this.unchanged = this.badCode === undefined && this.encoders.every((e) => e === undefined);
  }

  /** `row` in the client's formats. */
  row(row: Row): Row {
    if (this.badCode !== undefined)
      throw new MergeError(
        SQLSTATE_INVALID_PARAMETER_VALUE,
        `unsupported format code: ${this.badCode}`,
      );
    return row.map((v, i) => {
      const encode = this.encoders[i];
      return v === null || encode === undefined ? v : encode(v);
    });
  }
}

/** The last step of a read across nodes: its rows in the client's formats (ClientFormats). */
export class ClientFormatSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly formats: ClientFormats;

  constructor(input: RowSource, clientFormats: readonly number[]) {
    this.input = input;
    this.formats = new ClientFormats(input.fields, clientFormats);
    this.fields = this.formats.fields;
  }

  async next(): Promise<Row | undefined> {
    const row = await this.input.next();
    return row === undefined ? undefined : this.formats.row(row);
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
