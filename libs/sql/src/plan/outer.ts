// A query over one subquery whose rows are merged at the router (it aggregates, de-duplicates or
// limits across nodes): `SELECT * | columns FROM (<query>) s [WHERE ...] [ORDER BY ...] [LIMIT
// ...]`, what a read through a view over sharded tables becomes once the router has put the
// view's definition in its place. The subquery is planned as a read of its own; the outer level's
// filter (HAVING's language), order, limit and choice of columns run at the router over its rows.
import type { Node, ResTarget, SelectStmt } from 'libpg-query';
import type { PlanNode, PlannerCatalog, SortKey } from './types.js';
import { containsTag, refuse } from './nodes.js';
import { outputName } from './names.js';
import { isStar, positionOf, sortItems } from './order.js';
import { planLimit } from './limit.js';
import { planHaving } from './having.js';

export interface OverSubquery {
  readonly sub: SelectStmt;
  /** Plans the outer level over the subquery's planned root (its rows: the subquery's columns). */
  wrap(inner: PlanNode, catalog: PlannerCatalog): PlanNode;
}

const OUTER_ONLY_REFUSED = new Set(['SubLink', 'FuncCall', 'WindowDef']);

/** The shape this file plans, or undefined: the caller plans the statement as before. */
export function overSubquery(s: SelectStmt): OverSubquery | undefined {
  const [from, ...more] = s.fromClause ?? [];
  if (from === undefined || more.length > 0 || !('RangeSubselect' in from)) return undefined;
  const rs = from.RangeSubselect;
  const q = rs.subquery;
  if (rs.lateral === true || q === undefined || !('SelectStmt' in q)) return undefined;
  if ((rs.alias?.colnames?.length ?? 0) > 0) return undefined;
  const plain =
    (s.groupClause?.length ?? 0) === 0 &&
    s.havingClause === undefined &&
    (s.distinctClause?.length ?? 0) === 0 &&
    s.withClause === undefined &&
    (s.lockingClause?.length ?? 0) === 0 &&
    (s.windowClause?.length ?? 0) === 0 &&
    s.intoClause === undefined;
  if (!plain) return undefined;
  const targets: ResTarget[] = [];
  for (const n of s.targetList ?? []) {
    if (!('ResTarget' in n)) return undefined;
    targets.push(n.ResTarget);
  }
  // Functions, subqueries and window calls need evaluating: not the router's to do here.
  if (containsTag(targets, OUTER_ONLY_REFUSED) || containsTag(s.whereClause, OUTER_ONLY_REFUSED))
    return undefined;
  const sub = q.SelectStmt;
  const alias = rs.alias?.aliasname;
  return { sub, wrap: (inner, catalog) => wrap(s, targets, sub, alias, inner, catalog) };
}

/** The subquery's output column names, or undefined when a `*` makes them the nodes' business. */
function namesOf(s: SelectStmt): readonly string[] | undefined {
  if (s.op !== undefined && s.op !== 'SETOP_NONE') return s.larg ? namesOf(s.larg) : undefined;
  const names: string[] = [];
  for (const n of s.targetList ?? []) {
    if (!('ResTarget' in n) || isStar(n.ResTarget)) return undefined;
    names.push(outputName(n.ResTarget));
  }
  return names;
}

/** The subquery column a column reference of the outer level names, by its index. */
function columnOf(
  node: Node,
  names: readonly string[] | undefined,
  alias: string | undefined,
): number | undefined {
  if (!('ColumnRef' in node)) return undefined;
  const fields = (node.ColumnRef.fields ?? []).map((f) => ('String' in f ? f.String.sval : '*'));
  const name =
    fields.length === 1
      ? fields[0]
      : fields.length === 2 && fields[0] === alias
        ? fields[1]
        : undefined;
  if (name === undefined || name === '*' || names === undefined) return undefined;
  const i = names.indexOf(name);
  if (i < 0) return undefined;
  if (names.indexOf(name, i + 1) >= 0) refuse(`column reference "${name}" is ambiguous`);
  return i;
}

function wrap(
  s: SelectStmt,
  targets: readonly ResTarget[],
  sub: SelectStmt,
  alias: string | undefined,
  inner: PlanNode,
  catalog: PlannerCatalog,
): PlanNode {
  const names = namesOf(sub);
  const must = (n: Node, what: string): number =>
    columnOf(n, names, alias) ??
    refuse(`${what} over a subquery merged across nodes must name one of its columns`);
  // The select list as subquery columns (a `*` is all of them, in order).
  const project: number[] = [];
  let identity = true;
  for (const t of targets) {
    if (isStar(t)) {
      const v = t.val!;
      const qualifier = 'ColumnRef' in v ? v.ColumnRef.fields : undefined;
      if (qualifier !== undefined && qualifier.length === 2) {
        const q = qualifier[0];
        if (q === undefined || !('String' in q) || q.String.sval !== alias)
          refuse('this * over a subquery merged across nodes is not supported');
      } else if (qualifier === undefined || qualifier.length !== 1) {
        refuse('this * over a subquery merged across nodes is not supported');
      }
      if (names === undefined) {
        if (targets.length > 1)
          refuse('* with other columns over a subquery with * is not supported across nodes');
        project.push(-1);
        continue;
      }
      names.forEach((_, i) => project.push(i));
      continue;
    }
    const i = must(t.val!, 'a select-list entry');
    if (t.name !== undefined && t.name !== names![i])
      refuse('renaming a column of a subquery merged across nodes is not supported');
    if (i !== project.length) identity = false;
    project.push(i);
  }
  const all = project[0] === -1;
  if (!all && names !== undefined && project.length !== names.length) identity = false;
  let root = inner;
  if (s.whereClause !== undefined)
    root = {
      kind: 'filter',
      input: root,
      predicate: planHaving(s.whereClause, { hiddenColumn: (n) => must(n, 'WHERE') }, 'WHERE'),
    };
  const items = sortItems(s.sortClause, catalog);
  if (items.length > 0) {
    const keys: SortKey[] = items.map((item) => {
      const position = positionOf(item.expr);
      let column: number | undefined;
      if (position !== undefined) {
        if (all) refuse('ORDER BY position over * of a subquery is not supported across nodes');
        column =
          project[position] ?? refuse(`ORDER BY position ${position + 1} is not in select list`);
      } else {
        column = must(item.expr, 'ORDER BY');
      }
      return {
        column,
        descending: item.descending,
        nullsFirst: item.nullsFirst,
        bytewiseText: item.bytewiseText,
      };
    });
    root = { kind: 'sort', input: root, keys };
  }
  const limit = planLimit(s);
  if (limit.count !== undefined || limit.offset !== undefined)
    root = { kind: 'limit', input: root, count: limit.count, offset: limit.offset };
  if (all || identity) return root;
  return {
    kind: 'compute',
    input: root,
    columns: project.map((index) => ({ kind: 'input', index })),
  };
}
