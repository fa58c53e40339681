// FinalAggregate: merges the nodes' partial rows into one row per group (groups keyed by typed
// equality of the group-key columns, so 1.0 and 1.00 are one group). It holds one entry per group,
// and with no GROUP BY it always produces exactly one row, as Postgres does.
import type { FinalAggregate } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import type { Accumulator, AggregateKind } from './accumulate.js';
import { aggregateKind } from './accumulate.js';
import { rowKey, typeOps } from './compare.js';
import type { TypeOps } from './compare.js';
import { internal } from './errors.js';

interface Group {
  /** The first row of the group, for `value` columns. */
  readonly first: Row;
  readonly accumulators: Accumulator[];
}

export class FinalAggregateSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly node: FinalAggregate;
  private readonly kinds: (AggregateKind | undefined)[];
  private readonly keyOps: TypeOps[];
  private output: Row[] | undefined;
  private position = 0;

  constructor(input: RowSource, node: FinalAggregate, textCollationIsBytewise: boolean) {
    this.input = input;
    this.node = node;
    const leaf = input.fields;
    this.keyOps = node.groupKeys.map((c) =>
      typeOps(leaf[c]?.typeOid ?? 0, 'equality', textCollationIsBytewise, leaf[c]?.format),
    );
    this.kinds = node.columns.map((c) =>
      c.kind === 'aggregate'
        ? aggregateKind(c.fn, c.inputs, leaf, textCollationIsBytewise)
        : undefined,
    );
    this.fields = node.columns.map((c, i): FieldDescription => {
      // Filled by the Compute above; NULL of no type here.
      if (c.kind === 'computed')
        return {
          name: '?column?',
          tableOid: 0,
          columnAttr: 0,
          typeOid: 0,
          typeSize: -1,
          typeModifier: -1,
          format: 0,
        };
      if (c.kind === 'value') {
        const f = leaf[c.input];
        if (f === undefined) throw internal(`value column ${c.input} is not in the leaf row`);
        return f;
      }
      const k = this.kinds[i] as AggregateKind;
      return {
        name: c.name,
        tableOid: 0,
        columnAttr: 0,
        typeOid: k.typeOid,
        typeSize: k.typeSize,
        typeModifier: k.typeModifier,
        format: k.format,
      };
    });
  }

  private newGroup(first: Row): Group {
    return { first, accumulators: this.kinds.flatMap((k) => (k === undefined ? [] : [k.make()])) };
  }

  private async collect(): Promise<Row[]> {
    const groups = new Map<string, Group>();
    for (let row = await this.input.next(); row !== undefined; row = await this.input.next()) {
      const key = rowKey(
        this.node.groupKeys.map((c, i) => {
          const v = row?.[c] ?? null;
          return v === null
            ? null
            : (this.keyOps[i] as TypeOps).key((this.keyOps[i] as TypeOps).decode(v));
        }),
      );
      let g = groups.get(key);
      if (g === undefined) {
        g = this.newGroup(row);
        groups.set(key, g);
      }
      for (const acc of g.accumulators) acc.add(row);
    }
    await this.input.close();
    if (groups.size === 0 && this.node.implicitGroup) {
      const empty: Row = this.input.fields.map(() => null);
      groups.set('', this.newGroup(empty));
    }
    const out: Row[] = [];
    for (const g of groups.values()) {
      let a = 0;
      out.push(
        this.node.columns.map((c) =>
          c.kind === 'value'
            ? (g.first[c.input] ?? null)
            : c.kind === 'computed'
              ? null
              : (g.accumulators[a++] as Accumulator).result(),
        ),
      );
    }
    return out;
  }

  async next(): Promise<Row | undefined> {
    this.output ??= await this.collect();
    const row = this.output[this.position];
    if (row === undefined) {
      this.output = [];
      return undefined;
    }
    this.position++;
    return row;
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
