// Merge of two adjacent ranges (`tessera range merge KS:LO1 KS:LO2`): when their owners differ,
// the upper one moves to the lower one's owner first (a child move job), then the catalog merge
// (same owner, so no fence changes).
import { JobFailed } from '../errors.js';
import type { JobKind } from '../job/kind.js';
import { rangeAt } from '../move/catalog-view.js';
import { moveChild, runChild } from './children.js';

export interface MergeSpec {
  keyspace: string;
  lo: string;
  /** The lo of the range right after it. */
  lo2: string;
}

export const mergeKind: JobKind = {
  kind: 'merge',
  steps: () => ['move', 'merge'],
  async run(rt) {
    const spec = rt.spec<MergeSpec>();
    const lo = BigInt(spec.lo);
    const lo2 = BigInt(spec.lo2);
    let catalog = await rt.catalog();
    const lower = rangeAt(catalog, spec.keyspace, lo);
    if (!lower) throw new JobFailed(`keyspace ${spec.keyspace} has no range starting at ${lo}`);
    const upper = rangeAt(catalog, spec.keyspace, lo2);
    const merged = !upper && lower.hi >= lo2;
    if (!merged) {
      if (!upper || lower.hi + 1n !== lo2)
        throw new JobFailed(
          `ranges ${spec.keyspace}:${lo} and ${spec.keyspace}:${lo2} are not adjacent (the first ends at ${lower.hi})`,
        );
      if (!rt.isDone('move')) {
        await rt.phase('moving', 'move');
        if (upper.owner !== lower.owner)
          await runChild(
            rt,
            'move',
            'upper',
            moveChild({ keyspace: spec.keyspace, lo: spec.lo2, to: lower.owner }),
            `the move of ${spec.keyspace}:${lo2} to ${lower.owner}`,
          );
        await rt.done('move', rt.step('move').progress);
      }
      await rt.phase('merging', 'merge');
      catalog = await rt.catalog();
      if (rangeAt(catalog, spec.keyspace, lo2))
        await rt.call(() => rt.coord.admin.mergeRanges({ keyspace: spec.keyspace, lo }));
    }
    await rt.done('merge');
    const after = rangeAt(await rt.catalog(), spec.keyspace, lo)!;
    return {
      state: 'done',
      result: { keyspace: spec.keyspace, lo: spec.lo, hi: after.hi.toString(), owner: after.owner },
    };
  },
  async undo() {},
};
