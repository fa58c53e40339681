// Plain rows across nodes: rows are passed on as they arrive from any node (one pull outstanding
// per node, so memory stays bounded and a slow node does not hold up the others).
import type { FieldDescription, Row, RowSource } from './types.js';
import type { LeafSource } from './leaves.js';
import { closeAll } from './leaves.js';

type Pulled = { readonly leaf: number; readonly row?: Row | undefined; readonly error?: unknown };

export class Interleave implements RowSource {
  readonly fields: readonly FieldDescription[];
  private readonly leaves: readonly LeafSource[];
  private readonly pending = new Map<number, Promise<Pulled>>();
  private readonly live: Set<number>;

  constructor(leaves: readonly LeafSource[]) {
    this.leaves = leaves;
    this.fields = leaves[0]?.fields ?? [];
    this.live = new Set(leaves.map((_, i) => i));
  }

  async next(): Promise<Row | undefined> {
    while (this.live.size > 0) {
      for (const i of this.live) {
        if (this.pending.has(i)) continue;
        const leaf = this.leaves[i];
        if (leaf === undefined) continue;
        // Errors are captured into the settled value so an unobserved rejection never escapes.
        this.pending.set(
          i,
          leaf.next().then(
            (row) => ({ leaf: i, row }),
            (error: unknown) => ({ leaf: i, error: error ?? new Error('leaf failed') }),
          ),
        );
      }
      const got = await Promise.race(this.pending.values());
      this.pending.delete(got.leaf);
      if (got.error !== undefined) throw got.error;
      if (got.row !== undefined) return got.row;
      this.live.delete(got.leaf);
    }
    return undefined;
  }

  async close(): Promise<void> {
    this.live.clear();
    this.pending.clear();
    await closeAll(this.leaves);
  }
}
