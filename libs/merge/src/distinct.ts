// Distinct across nodes: each node already removed its own duplicates; the router drops a row equal
// (per type: 1.0 = 1.00, bpchar ignores trailing blanks) to one it has passed on. Order is kept, so
// it works above MergeSort and Sort. It remembers one key per distinct row.
import type { FieldDescription, Row, RowSource } from './types.js';
import { rowKey, typeOps } from './compare.js';
import type { TypeOps } from './compare.js';

export class DistinctSource implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly input: RowSource;
  private readonly ops: TypeOps[];
  private readonly seen = new Set<string>();

  constructor(input: RowSource, textCollationIsBytewise: boolean) {
    this.input = input;
    this.fields = input.fields;
    this.ops = this.fields.map((f) =>
      typeOps(f.typeOid, 'equality', textCollationIsBytewise, f.format),
    );
  }

  async next(): Promise<Row | undefined> {
    for (let row = await this.input.next(); row !== undefined; row = await this.input.next()) {
      const key = rowKey(
        row.map((v, i) =>
          v === null ? null : (this.ops[i] as TypeOps).key((this.ops[i] as TypeOps).decode(v)),
        ),
      );
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      return row;
    }
    return undefined;
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}
