// INSERT: target, column list, VALUES rows (values and exact source spans, so a multi-row insert
// can be split by row owner), INSERT ... SELECT, ON CONFLICT, RETURNING.
import type { InsertStmt, Node, SelectStmt } from 'libpg-query';
import type { InsertAnalysis, OnConflict, ParamSpan, RowValue, TextSpan } from './types.js';
import type { StatementContext } from './context.js';
import { baseOf } from './context.js';
import { collect } from './collect.js';
import { rowValueOf } from './values.js';
import { scanTokens } from './parser.js';
import { selectScope, selectWhere } from './dml.js';
import { selectShape } from './shape.js';

function isPlainValues(s: SelectStmt): boolean {
  return (
    (s.valuesLists?.length ?? 0) > 0 &&
    s.withClause === undefined &&
    s.sortClause === undefined &&
    s.limitCount === undefined &&
    s.limitOffset === undefined &&
    s.lockingClause === undefined
  );
}

/** Spans of the VALUES rows of the INSERT in `sql`; undefined if the layout is not the plain one. */
export function valuesRowSpans(
  sql: string,
  rowCount: number,
): { rows: TextSpan[]; all: TextSpan; params: ParamSpan[] } | undefined {
  const all = scanTokens(sql);
  const params: ParamSpan[] = [];
  for (const t of all) {
    if (/^\$\d+$/.test(t.text))
      params.push({ start: t.start, end: t.end, index: Number(t.text.slice(1)) - 1 });
  }
  const tokens = all.filter((t) => !t.isComment);
  let depth = 0;
  let sawInsert = false;
  let i = 0;
  for (; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === undefined) break;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && t.keyword === 'insert') sawInsert = true;
    else if (depth === 0 && sawInsert && t.keyword === 'values') break;
  }
  i++;
  const rows: TextSpan[] = [];
  while (i < tokens.length) {
    const open = tokens[i];
    if (open?.text !== '(') return undefined;
    let d = 0;
    let close: number | undefined;
    for (let k = i; k < tokens.length; k++) {
      const t = tokens[k];
      if (t?.text === '(') d++;
      else if (t?.text === ')' && --d === 0) {
        close = k;
        break;
      }
    }
    const closeTok = close === undefined ? undefined : tokens[close];
    if (close === undefined || closeTok === undefined) return undefined;
    rows.push({ start: open.start, end: closeTok.end });
    i = close + 1;
    if (tokens[i]?.text !== ',') break;
    i++;
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (rows.length !== rowCount || first === undefined || last === undefined) return undefined;
  return { rows, all: { start: first.start, end: last.end }, params };
}

function onConflictOf(s: InsertStmt): OnConflict | undefined {
  const oc = s.onConflictClause;
  if (oc === undefined) return undefined;
  const columns: string[] = [];
  for (const e of oc.infer?.indexElems ?? []) {
    if ('IndexElem' in e && e.IndexElem.name !== undefined) columns.push(e.IndexElem.name);
  }
  const updateColumns: string[] = [];
  for (const t of oc.targetList ?? []) {
    if (
      'ResTarget' in t &&
      t.ResTarget.name !== undefined &&
      !updateColumns.includes(t.ResTarget.name)
    ) {
      updateColumns.push(t.ResTarget.name);
    }
  }
  return {
    action: oc.action === 'ONCONFLICT_UPDATE' ? 'update' : 'nothing',
    columns,
    constraint: oc.infer?.conname,
    updateColumns,
  };
}

export function analyzeInsert(ctx: StatementContext, node: Node, s: InsertStmt): InsertAnalysis {
  const target = s.relation;
  const inner =
    s.selectStmt !== undefined && 'SelectStmt' in s.selectStmt
      ? s.selectStmt.SelectStmt
      : undefined;
  const plainValues = inner !== undefined && isPlainValues(inner);
  const sourceScope = inner !== undefined && !plainValues ? selectScope(inner) : undefined;
  const top = new Set<object>(sourceScope?.rangeVars ?? []);
  if (target !== undefined) top.add(target);
  const c = collect(node, { top, targets: new Set(target === undefined ? [] : [target]) });
  sourceScope?.resolveIndexes(c.indexOf);

  const columns =
    s.cols === undefined
      ? undefined
      : s.cols.flatMap((n) => ('ResTarget' in n ? [n.ResTarget.name ?? ''] : []));
  let rows: RowValue[][] | undefined;
  let spans: ReturnType<typeof valuesRowSpans>;
  if (plainValues && inner !== undefined) {
    rows = (inner.valuesLists ?? []).map((l) =>
      'List' in l ? (l.List.items ?? []).map(rowValueOf) : [],
    );
    spans = valuesRowSpans(ctx.sql, rows.length);
  }
  const source = s.selectStmt === undefined ? 'default_values' : plainValues ? 'values' : 'select';
  return {
    kind: 'insert',
    ...baseOf(ctx, c),
    targetIndex: target === undefined ? -1 : (c.indexOf.get(target) ?? -1),
    columns,
    source,
    rows,
    rowSlices: spans?.rows.map((r) => ctx.sql.slice(r.start, r.end)),
    rowSpans: spans?.rows,
    valuesSpan: spans?.all,
    paramSpans: spans?.params,
    fromSelect: source === 'select',
    select:
      inner !== undefined && sourceScope !== undefined
        ? { where: selectWhere(inner, sourceScope), shape: selectShape(inner) }
        : undefined,
    onConflict: onConflictOf(s),
    hasReturning: (s.returningClause?.exprs?.length ?? 0) > 0,
    overriding:
      s.override === 'OVERRIDING_SYSTEM_VALUE'
        ? 'system'
        : s.override === 'OVERRIDING_USER_VALUE'
          ? 'user'
          : undefined,
  };
}
