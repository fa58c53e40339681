// executeReadPlan(plan, leaves): runs a multi-node read plan over the nodes' result streams and
// yields the client's result: RowDescription, DataRows, CommandComplete. Pure: the router owns the
// connections; this pulls rows, merges them, and returns() every leaf iterator when done.
import type { PlanNode, ReadPlan, Scatter } from '@tessera/sql';
import type { ExecuteOptions, LeafStreams, ResultMessage, RowSource } from './types.js';
import { openLeaves } from './leaves.js';
import { Interleave } from './scatter.js';
import { MergeSort } from './merge-sort.js';
import { FinalAggregateSource } from './aggregate.js';
import { FilterSource } from './filter.js';
import { ComputeSource } from './compute.js';
import { CountRowsSource } from './count-rows.js';
import { SortSource } from './sort.js';
import { DistinctSource } from './distinct.js';
import { LimitSource } from './limit.js';
import { ProjectSource } from './project.js';
import { ClientFormatSource } from './formats.js';
import { internal } from './errors.js';

interface Context {
  readonly leaves: LeafStreams;
  readonly plan: ReadPlan;
  readonly params: readonly (string | Buffer | null)[];
  /** Every source opened so far, closed (again, idempotently) when the execution ends. */
  readonly opened: RowSource[];
}

function track<T extends RowSource>(ctx: Context, source: T): T {
  ctx.opened.push(source);
  return source;
}

async function leavesOf(ctx: Context, scatter: Scatter) {
  const leaves = await openLeaves(ctx.leaves, scatter.columnCount);
  for (const l of leaves) track(ctx, l);
  return leaves;
}

async function open(node: PlanNode, ctx: Context): Promise<RowSource> {
  const bytewise = ctx.plan.textCollationIsBytewise;
  switch (node.kind) {
    case 'scatter':
      return track(ctx, new Interleave(await leavesOf(ctx, node)));
    case 'merge_sort':
      return track(ctx, new MergeSort(await leavesOf(ctx, node.input), node.keys));
    case 'aggregate':
      return track(ctx, new FinalAggregateSource(await open(node.input, ctx), node, bytewise));
    case 'compute':
      return track(ctx, new ComputeSource(await open(node.input, ctx), node));
    case 'count_rows':
      return track(ctx, new CountRowsSource(await open(node.input, ctx), node));
    case 'filter':
      return track(ctx, new FilterSource(await open(node.input, ctx), node, bytewise));
    case 'sort':
      return track(ctx, new SortSource(await open(node.input, ctx), node));
    case 'distinct':
      return track(ctx, new DistinctSource(await open(node.input, ctx), bytewise));
    case 'limit':
      return track(ctx, new LimitSource(await open(node.input, ctx), node, ctx.params));
    case 'project':
      return track(ctx, new ProjectSource(await open(node.input, ctx), node));
    default: {
      const never: never = node;
      throw internal(`unknown plan node ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Executes `plan` over one leaf stream per participating node (each runs `plan.leafSql` with the
 * client's parameters, results in `leafResultFormats(plan, options.resultFormats)`). Leaf errors
 * are rethrown as they are; refusals found at run time (a type that cannot be merged exactly) are
 * MergeError 0A000; the tag counts rows as Postgres does.
 */
export async function* executeReadPlan(
  plan: ReadPlan,
  leaves: LeafStreams,
  options: ExecuteOptions = {},
): AsyncGenerator<ResultMessage, void, undefined> {
  const ctx: Context = { leaves, plan, params: options.params ?? [], opened: [] };
  try {
    const root = track(
      ctx,
      new ClientFormatSource(await open(plan.root, ctx), options.resultFormats ?? []),
    );
    yield { kind: 'RowDescription', fields: root.fields };
    let rowCount = 0;
    for (let row = await root.next(); row !== undefined; row = await root.next()) {
      rowCount++;
      yield { kind: 'DataRow', values: row };
    }
    yield { kind: 'CommandComplete', tag: `SELECT ${rowCount}`, rowCount };
  } finally {
    // Closing is idempotent; on an error or an abandoned iteration this cancels every node query.
    await Promise.allSettled(ctx.opened.map((s) => s.close()));
  }
}
