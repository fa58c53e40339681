// Sort at the router, only above FinalAggregate (one row per group, already in memory there):
// a stable sort with the same comparator MergeSort uses.
import type { Sort } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import { rowComparator } from './order.js';

export class SortSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly node: Sort;
  private sorted: Row[] | undefined;
  private position = 0;

  constructor(input: RowSource, node: Sort) {
    this.input = input;
    this.node = node;
    this.fields = input.fields;
  }

  private async collect(): Promise<Row[]> {
    const comparator = rowComparator(this.fields, this.node.keys);
    const entries: { row: Row; keys: unknown[] }[] = [];
    for (let row = await this.input.next(); row !== undefined; row = await this.input.next())
      entries.push({ row, keys: comparator.decode(row) });
    await this.input.close();
    entries.sort((a, b) => comparator.compare(a.keys, b.keys));
    return entries.map((e) => e.row);
  }

  async next(): Promise<Row | undefined> {
    this.sorted ??= await this.collect();
    const row = this.sorted[this.position];
    if (row !== undefined) this.position++;
    return row;
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
