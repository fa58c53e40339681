// Split (`tessera range split KS:LO --at HASH [--move-to NODE]`): the catalog split (both halves
// keep the owner, so no fence changes), then, with --move-to, a move of the upper half as a child
// job. Re-running after a crash finds the split already made.
import { JobFailed } from '../errors.js';
import type { JobKind } from '../job/kind.js';
import type { JobRuntime } from '../job/runtime.js';
import { rangeAt } from '../move/catalog-view.js';
import { moveChild, runChild } from './children.js';

export interface SplitSpec {
  keyspace: string;
  lo: string;
  /** First hash of the upper half; the midpoint when absent. */
  at?: string;
  moveTo?: string;
}

export function splitSteps(spec: SplitSpec): string[] {
  return spec.moveTo ? ['split', 'move'] : ['split'];
}

/** The catalog split, unless it is already there; resolves with the upper half's lo. */
export async function catalogSplit(
  rt: JobRuntime,
  keyspace: string,
  lo: bigint,
  at: bigint | undefined,
): Promise<bigint> {
  const catalog = await rt.catalog();
  const r = rangeAt(catalog, keyspace, lo);
  if (!r) throw new JobFailed(`keyspace ${keyspace} has no range starting at ${lo}`);
  if (at !== undefined && rangeAt(catalog, keyspace, at) && r.hi === at - 1n) return at;
  await rt.call(() =>
    rt.coord.admin.splitRange(at === undefined ? { keyspace, lo } : { keyspace, lo, at }),
  );
  const after = await rt.catalog();
  return rangeAt(after, keyspace, lo)!.hi + 1n;
}

export const splitKind: JobKind = {
  kind: 'split',
  steps: (spec) => splitSteps(spec as SplitSpec),
  async run(rt) {
    const spec = rt.spec<SplitSpec>();
    const lo = BigInt(spec.lo);
    let upper: bigint;
    if (!rt.isDone('split')) {
      await rt.phase('splitting', 'split');
      upper = await catalogSplit(
        rt,
        spec.keyspace,
        lo,
        spec.at === undefined ? undefined : BigInt(spec.at),
      );
      await rt.done('split', { upperLo: upper.toString() });
    }
    upper = BigInt(rt.step('split').progress['upperLo'] as string);
    if (spec.moveTo && !rt.isDone('move')) {
      await rt.phase('moving', 'move');
      const child = await runChild(
        rt,
        'move',
        'upper',
        moveChild({ keyspace: spec.keyspace, lo: upper.toString(), to: spec.moveTo }),
        `the move of ${spec.keyspace}:${upper} to ${spec.moveTo}`,
      );
      await rt.done('move', {
        ...rt.step('move').progress,
        result: JSON.parse(child.resultJson || '{}'),
      });
    }
    return {
      state: 'done',
      result: {
        keyspace: spec.keyspace,
        lower: spec.lo,
        upper: upper.toString(),
        movedTo: spec.moveTo ?? null,
      },
    };
  },
  // The catalog split is harmless on its own (both halves keep the owner): it stays. A running
  // child move is cancelled with its parent by the coordinator.
  async undo() {},
};
