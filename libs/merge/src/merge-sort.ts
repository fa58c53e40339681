// MergeSort: a k-way merge of node streams that are each sorted by the same keys. It holds one row
// per node (a heap of k entries) and pulls the next row only from the node whose row it just
// passed on. A node whose rows arrive out of order (a collation or type the router compares
// differently) stops the query with an error rather than a silently wrong order.
import type { SortKey } from '@tessera/sql';
import type { FieldDescription, Row, RowSource } from './types.js';
import type { LeafSource } from './leaves.js';
import { closeAll } from './leaves.js';
import { Heap } from './heap.js';
import { rowComparator } from './order.js';
import type { RowComparator } from './order.js';
import { unsupported } from './errors.js';

interface Head {
  readonly leaf: number;
  readonly row: Row;
  readonly keys: readonly unknown[];
}

export class MergeSort implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly leaves: readonly LeafSource[];
  private readonly comparator: RowComparator;
  private readonly heap: Heap<Head>;
  private started = false;

  constructor(leaves: readonly LeafSource[], keys: readonly SortKey[]) {
    this.leaves = leaves;
    this.fields = leaves[0]?.fields ?? [];
    this.comparator = rowComparator(this.fields, keys);
    this.heap = new Heap<Head>((a, b) => {
      const c = this.comparator.compare(a.keys, b.keys);
      return c < 0 || (c === 0 && a.leaf < b.leaf);
    });
  }

  private async pull(leaf: number): Promise<Head | undefined> {
    const source = this.leaves[leaf];
    const row = source === undefined ? undefined : await source.next();
    return row === undefined ? undefined : { leaf, row, keys: this.comparator.decode(row) };
  }

  async next(): Promise<Row | undefined> {
    if (!this.started) {
      this.started = true;
      const heads = await Promise.all(this.leaves.map((_, i) => this.pull(i)));
      for (const h of heads) if (h !== undefined) this.heap.push(h);
    }
    const top = this.heap.pop();
    if (top === undefined) return undefined;
    const following = await this.pull(top.leaf);
    if (following !== undefined) {
      if (this.comparator.compare(following.keys, top.keys) < 0)
        throw unsupported(
          `rows from node ${top.leaf} are not in the order the router compares them (a column collation other than the database's?); this ORDER BY cannot be merged across nodes`,
        );
      this.heap.push(following);
    }
    return top.row;
  }

  async close(): Promise<void> {
    await closeAll(this.leaves);
  }
}
