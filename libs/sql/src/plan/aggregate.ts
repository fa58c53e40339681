// Plans a SELECT with aggregates or GROUP BY: each node groups its rows and computes partial
// aggregates (avg as sum and count; count(DISTINCT x) by adding x to the node's GROUP BY); the
// router merges groups, then applies HAVING, ORDER BY, DISTINCT and LIMIT over the final rows.
import type { FuncCall, Node, ResTarget, SelectStmt } from 'libpg-query';
import type {
  ComputedColumn,
  Expr,
  FinalColumn,
  PlanNode,
  PlanOptions,
  PlannerCatalog,
  Scatter,
  SortKey,
} from './types.js';
import { toExpr } from './expression.js';
import {
  builtinName,
  canonical,
  clone,
  containsAggregate,
  isAggregateCall,
  refuse,
  sameExpr,
} from './nodes.js';
import { outputName } from './names.js';
import { isStar, matchTarget, positionOf, sortItems } from './order.js';
import { planLimit } from './limit.js';
import { planHaving } from './having.js';
import { deparseNode, deparseStatement } from './deparse.js';
import { renumberParams } from './params.js';

const PLAIN_AGGREGATES = new Set([
  'count',
  'sum',
  'min',
  'max',
  'bool_and',
  'bool_or',
  'every',
  'avg',
]);

/** Collects the leaf select list and the router's final columns while the query is walked. */
export class AggregateBuilder {
  readonly leafTargets: ResTarget[] = [];
  /** Leaf positions in the leaf's GROUP BY (router group keys plus count(DISTINCT) arguments). */
  readonly leafGroupBy: number[] = [];
  readonly columns: FinalColumn[] = [];
  readonly groupExprs: Node[];
  /** Leaf column of each group expression, once it has one. */
  private readonly groupLeaf: (number | undefined)[];
  private readonly partials = new Map<string, number>();
  private readonly aggregateColumns = new Map<string, number>();
  private readonly valueColumns = new Map<string, number>();
  private hiddenCount = 0;
  /** Final columns that the Compute above fills with an expression over the row's aggregates. */
  readonly computed = new Map<number, { readonly expr: Expr; readonly name: string }>();
  private readonly computedColumns = new Map<string, number>();

  constructor(
    groupExprs: Node[],
    private readonly options: PlanOptions = {},
  ) {
    this.groupExprs = groupExprs;
    this.groupLeaf = groupExprs.map(() => undefined);
  }

  /**
   * An expression over aggregate results as a final column computed at the router (visible: in
   * select-list order; hidden: shared with an equal earlier expression).
   */
  addComputed(expr: Node, name: string, hidden = false): number {
    if (this.options.aggregateExpressions !== true)
      refuse(
        `expressions over aggregate results such as ${deparseNode(expr)} are not supported across nodes`,
      );
    const key = canonical(expr);
    const known = this.computedColumns.get(key);
    if (hidden && known !== undefined) return known;
    // The column is reserved first; a visible one is translated (which may add hidden columns)
    // only after every select-list item has its place, so the select list keeps its positions.
    this.columns.push({ kind: 'computed' });
    const index = this.columns.length - 1;
    if (known === undefined) this.computedColumns.set(key, index);
    if (hidden) this.translate(index, expr, name);
    else this.pending.push({ index, expr, name });
    return index;
  }

  private readonly pending: { index: number; expr: Node; name: string }[] = [];

  private translate(index: number, expr: Node, name: string): void {
    const translated = toExpr(expr, {
      column: (n) =>
        'FuncCall' in n && isAggregateCall(n.FuncCall)
          ? this.addAggregate(n.FuncCall, '?column?', true)
          : this.hiddenColumn(n),
    });
    this.computed.set(index, { expr: translated, name });
  }

  /** Translates the select list's expressions, once every item has its column. */
  finishComputed(): void {
    for (const p of this.pending.splice(0)) this.translate(p.index, p.expr, p.name);
  }

  /** The Compute over the final rows, when any column is an expression. */
  compute(input: PlanNode): PlanNode {
    if (this.computed.size === 0) return input;
    const columns = this.columns.map((_, index): ComputedColumn => {
      const c = this.computed.get(index);
      return c === undefined ? { kind: 'input', index } : { kind: 'expr', ...c };
    });
    return { kind: 'compute', input, columns };
  }

  private addLeaf(val: Node, name: string | undefined): number {
    this.leafTargets.push(name === undefined ? { val } : { name, val });
    return this.leafTargets.length - 1;
  }

  private hiddenName(kind: string): string {
    return `_tessera_${kind}_${this.hiddenCount++}`;
  }

  /** A visible non-aggregate select-list entry: kept as written so the node names it. */
  addVisibleValue(t: ResTarget): number {
    const val = t.val ?? refuse('a select-list item could not be understood');
    const leaf = this.addLeaf(clone(val), t.name);
    const g = this.groupExprs.findIndex((e) => sameExpr(e, val));
    if (g >= 0 && this.groupLeaf[g] === undefined) this.groupLeaf[g] = leaf;
    this.columns.push({ kind: 'value', input: leaf });
    const key = canonical(val);
    if (!this.valueColumns.has(key)) this.valueColumns.set(key, this.columns.length - 1);
    return this.columns.length - 1;
  }

  /** Gives every group expression a leaf column and fixes the router's group keys. */
  finishGroups(): number[] {
    const keys: number[] = [];
    for (const [g, e] of this.groupExprs.entries()) {
      let leaf = this.groupLeaf[g];
      if (leaf === undefined) {
        leaf = this.addLeaf(clone(e), this.hiddenName('group'));
        this.groupLeaf[g] = leaf;
      }
      keys.push(leaf);
      if (!this.leafGroupBy.includes(leaf)) this.leafGroupBy.push(leaf);
    }
    return keys;
  }

  private partial(call: FuncCall): number {
    const node: Node = { FuncCall: call };
    const key = canonical(node);
    let leaf = this.partials.get(key);
    if (leaf === undefined) {
      leaf = this.addLeaf(node, this.hiddenName('partial'));
      this.partials.set(key, leaf);
    }
    return leaf;
  }

  private distinctArgument(arg: Node): number {
    const g = this.groupExprs.findIndex((e) => sameExpr(e, arg));
    if (g >= 0 && this.groupLeaf[g] !== undefined) return this.groupLeaf[g];
    const key = 'distinct:' + canonical(arg);
    let leaf = this.partials.get(key);
    if (leaf === undefined) {
      leaf = this.addLeaf(clone(arg), this.hiddenName('distinct'));
      this.partials.set(key, leaf);
      this.leafGroupBy.push(leaf);
    }
    return leaf;
  }

  /** A supported aggregate call as a final column (reused when the same call appears again). */
  addAggregate(call: FuncCall, name: string, hidden = false): number {
    const key = canonical({ FuncCall: call });
    const known = this.aggregateColumns.get(key);
    // Visible columns keep their order and names; a hidden use may share any earlier column.
    if (hidden && known !== undefined) return known;
    const column = this.planAggregate(call, name);
    this.columns.push(column);
    if (known === undefined) this.aggregateColumns.set(key, this.columns.length - 1);
    return this.columns.length - 1;
  }

  private planAggregate(call: FuncCall, name: string): FinalColumn {
    const fn = builtinName(call);
    const shown = deparseNode({ FuncCall: call });
    if (fn === undefined || !PLAIN_AGGREGATES.has(fn))
      refuse(`aggregate ${shown} is not supported across nodes`);
    if (call.agg_within_group === true || (call.agg_order?.length ?? 0) > 0)
      refuse(`ordered aggregates such as ${shown} are not supported across nodes`);
    if (call.func_variadic === true) refuse(`${shown} is not supported across nodes`);
    const args = call.args ?? [];
    if (args.some((a) => containsAggregate(a))) refuse(`nested aggregates in ${shown}`);
    if (call.agg_star === true) {
      if (fn !== 'count') refuse(`${shown} is not supported across nodes`);
      return { kind: 'aggregate', fn: 'count', inputs: [this.partial(strip(call))], name };
    }
    const arg = args.length === 1 ? args[0] : undefined;
    if (arg === undefined)
      refuse(`${shown} with ${args.length} arguments is not supported across nodes`);
    if (call.agg_distinct === true) {
      if (fn !== 'count' || call.agg_filter !== undefined)
        refuse(`${shown}: only count(DISTINCT x) without FILTER is supported across nodes`);
      return {
        kind: 'aggregate',
        fn: 'count_distinct',
        inputs: [this.distinctArgument(arg)],
        name,
      };
    }
    switch (fn) {
      case 'avg':
        return {
          kind: 'aggregate',
          fn: 'avg',
          inputs: [this.partial(renamed(call, 'sum')), this.partial(renamed(call, 'count'))],
          name,
        };
      case 'every':
        return { kind: 'aggregate', fn: 'bool_and', inputs: [this.partial(strip(call))], name };
      case 'count':
      case 'sum':
      case 'min':
      case 'max':
      case 'bool_and':
      case 'bool_or':
        return { kind: 'aggregate', fn, inputs: [this.partial(strip(call))], name };
      default:
        return refuse(`aggregate ${shown} is not supported across nodes`);
    }
  }

  /**
   * A final column for an ORDER BY / HAVING expression that is not in the select list: a hidden
   * aggregate, or a hidden value computed per group by the nodes (they check it is grouped).
   */
  hiddenColumn(expr: Node): number {
    if ('FuncCall' in expr && isAggregateCall(expr.FuncCall))
      return this.addAggregate(expr.FuncCall, '?column?', true);
    if (containsAggregate(expr)) return this.addComputed(expr, '?column?', true);
    const key = canonical(expr);
    const known = this.valueColumns.get(key);
    if (known !== undefined) return known;
    const g = this.groupExprs.findIndex((e) => sameExpr(e, expr));
    const leaf = g >= 0 ? this.groupLeaf[g] : undefined;
    const input = leaf ?? this.addLeaf(clone(expr), this.hiddenName('value'));
    this.columns.push({ kind: 'value', input });
    this.valueColumns.set(key, this.columns.length - 1);
    return this.columns.length - 1;
  }
}

function strip(call: FuncCall): FuncCall {
  const c = clone(call);
  delete c.location;
  return c;
}

function renamed(call: FuncCall, fn: string): FuncCall {
  const c = strip(call);
  // Same qualification as written, so a partial shared with a plain sum(x) / count(x) is one column.
  const names = c.funcname ?? [];
  c.funcname = [...names.slice(0, -1), { String: { sval: fn } }];
  return c;
}

function groupExpressions(s: SelectStmt, targets: readonly ResTarget[]): Node[] {
  const out: Node[] = [];
  for (const item of s.groupClause ?? []) {
    if ('GroupingSet' in item)
      refuse('GROUP BY ROLLUP, CUBE, GROUPING SETS and () are not supported across nodes');
    let expr: Node = item;
    const position = 'A_Const' in item ? positionOf(item) : undefined;
    if (position !== undefined) {
      const t = targets[position];
      if (t?.val === undefined) refuse(`GROUP BY position ${position + 1} is not in select list`);
      expr = t.val;
    } else if ('ColumnRef' in item && (item.ColumnRef.fields?.length ?? 0) === 1) {
      // GROUP BY <name> means an input column if one exists, else an output alias; only the
      // nodes know the columns, so a name that is also a different select-list alias is refused.
      const alias = targets.find((t) => t.name !== undefined && outputName(t) === stringOf(item));
      if (alias?.val !== undefined && !sameExpr(alias.val, item))
        refuse(
          `GROUP BY ${stringOf(item)} names a select-list alias; group by the expression or its position`,
        );
    }
    if (containsAggregate(expr)) refuse('aggregates are not allowed in GROUP BY');
    if (!out.some((e) => sameExpr(e, expr))) out.push(expr);
  }
  return out;
}

function stringOf(n: Node): string {
  const f = 'ColumnRef' in n ? n.ColumnRef.fields?.[0] : undefined;
  return f !== undefined && 'String' in f ? (f.String.sval ?? '') : '';
}

export interface AggregatePlan {
  readonly root: PlanNode;
  readonly leafSql: string;
  readonly leafParams: readonly number[];
}

export function planAggregate(
  s: SelectStmt,
  catalog: PlannerCatalog,
  options: PlanOptions = {},
): AggregatePlan {
  const targets: ResTarget[] = [];
  for (const n of s.targetList ?? []) {
    if (!('ResTarget' in n) || isStar(n.ResTarget))
      refuse('SELECT * together with aggregates or GROUP BY is not supported across nodes');
    targets.push(n.ResTarget);
  }
  const b = new AggregateBuilder(groupExpressions(s, targets), options);
  for (const t of targets) {
    const val = t.val ?? refuse('a select-list item could not be understood');
    if ('FuncCall' in val && isAggregateCall(val.FuncCall))
      b.addAggregate(val.FuncCall, outputName(t));
    else if (containsAggregate(val)) b.addComputed(val, outputName(t));
    else b.addVisibleValue(t);
  }
  b.finishComputed();
  const groupKeys = b.finishGroups();
  const visible = targets.length;

  const predicate = s.havingClause === undefined ? undefined : planHaving(s.havingClause, b);
  const isDistinct = (s.distinctClause?.length ?? 0) > 0;
  const keys: SortKey[] = sortItems(s.sortClause, catalog).map((item) => {
    const position = positionOf(item.expr);
    let column: number | undefined;
    if (position !== undefined) {
      if (position < 0 || position >= visible)
        refuse(`ORDER BY position ${position + 1} is not in select list`);
      column = position;
    } else column = matchTarget(item.expr, targets);
    if (column === undefined) {
      if (isDistinct)
        refuse(
          'for SELECT DISTINCT across nodes, ORDER BY expressions must appear in the select list',
        );
      column = b.hiddenColumn(item.expr);
    }
    return {
      column,
      descending: item.descending,
      nullsFirst: item.nullsFirst,
      bytewiseText: item.bytewiseText,
    };
  });

  const implicitGroup = (s.groupClause?.length ?? 0) === 0;
  if (implicitGroup && b.leafGroupBy.length > 0 && b.columns.some((c) => c.kind === 'value'))
    refuse(
      'count(DISTINCT ...) without GROUP BY together with plain columns is not supported across nodes',
    );

  const leaf: SelectStmt = {
    targetList: b.leafTargets.map((t): Node => ({ ResTarget: t })),
    limitOption: 'LIMIT_OPTION_DEFAULT',
    op: 'SETOP_NONE',
  };
  if (s.withClause !== undefined) leaf.withClause = clone(s.withClause);
  if (s.fromClause !== undefined) leaf.fromClause = clone(s.fromClause);
  if (s.whereClause !== undefined) leaf.whereClause = clone(s.whereClause);
  if (b.leafGroupBy.length > 0)
    leaf.groupClause = b.leafGroupBy.map((i): Node => ({ A_Const: { ival: { ival: i + 1 } } }));
  const params = renumberParams(leaf);
  const leafSql = deparseStatement({ SelectStmt: leaf });

  const limit = planLimit(s);
  const scatter: Scatter = {
    kind: 'scatter',
    sql: leafSql,
    params,
    columnCount: b.leafTargets.length,
  };
  let root: PlanNode = b.compute({
    kind: 'aggregate',
    input: scatter,
    groupKeys,
    columns: b.columns,
    implicitGroup,
  });
  if (predicate !== undefined) root = { kind: 'filter', input: root, predicate };
  if (keys.length > 0) root = { kind: 'sort', input: root, keys };
  const hidden = b.columns.length - visible;
  if (hidden > 0) root = { kind: 'project', input: root, dropTrailing: hidden };
  if (isDistinct) root = { kind: 'distinct', input: root };
  if (limit.count !== undefined || limit.offset !== undefined)
    root = { kind: 'limit', input: root, count: limit.count, offset: limit.offset };
  return { root, leafSql, leafParams: params };
}
