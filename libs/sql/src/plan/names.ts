// The name Postgres gives a select-list column (FigureColname in parse_target.c): ORDER BY <name>
// matches output names before input columns, so the planner must name columns exactly as Postgres.
import type { Node, ResTarget } from 'libpg-query';

const SQL_VALUE_NAMES: Record<string, string> = {
  SVFOP_CURRENT_DATE: 'current_date',
  SVFOP_CURRENT_TIME: 'current_time',
  SVFOP_CURRENT_TIME_N: 'current_time',
  SVFOP_CURRENT_TIMESTAMP: 'current_timestamp',
  SVFOP_CURRENT_TIMESTAMP_N: 'current_timestamp',
  SVFOP_LOCALTIME: 'localtime',
  SVFOP_LOCALTIME_N: 'localtime',
  SVFOP_LOCALTIMESTAMP: 'localtimestamp',
  SVFOP_LOCALTIMESTAMP_N: 'localtimestamp',
  SVFOP_CURRENT_ROLE: 'current_role',
  SVFOP_CURRENT_USER: 'current_user',
  SVFOP_USER: 'user',
  SVFOP_SESSION_USER: 'session_user',
  SVFOP_CURRENT_CATALOG: 'current_catalog',
  SVFOP_CURRENT_SCHEMA: 'current_schema',
};

function lastString(nodes: readonly Node[] | undefined): string | undefined {
  let name: string | undefined;
  for (const n of nodes ?? []) if ('String' in n) name = n.String.sval ?? '';
  return name;
}

/** [name, strength]: 2 for a real name, 1 for a fallback (type or `case`), 0 for none. */
function figure(node: Node | undefined): [string | undefined, number] {
  if (node === undefined) return [undefined, 0];
  if ('ColumnRef' in node) {
    const name = lastString(node.ColumnRef.fields);
    return name === undefined ? [undefined, 0] : [name, 2];
  }
  if ('A_Indirection' in node) {
    const name = lastString(node.A_Indirection.indirection);
    return name === undefined ? figure(node.A_Indirection.arg) : [name, 2];
  }
  if ('FuncCall' in node) return [lastString(node.FuncCall.funcname), 2];
  if ('A_Expr' in node) return node.A_Expr.kind === 'AEXPR_NULLIF' ? ['nullif', 2] : [undefined, 0];
  if ('TypeCast' in node) {
    const [name, strength] = figure(node.TypeCast.arg);
    if (strength <= 1) {
      const typeName = lastString(node.TypeCast.typeName?.names);
      if (typeName !== undefined) return [typeName, 1];
    }
    return [name, strength];
  }
  if ('CollateClause' in node) return figure(node.CollateClause.arg);
  if ('GroupingFunc' in node) return ['grouping', 2];
  if ('SubLink' in node) {
    const kind = node.SubLink.subLinkType;
    if (kind === 'EXISTS_SUBLINK') return ['exists', 2];
    if (kind === 'ARRAY_SUBLINK') return ['array', 2];
    return [undefined, 0];
  }
  if ('CaseExpr' in node) {
    const [name, strength] = figure(node.CaseExpr.defresult);
    return strength <= 1 ? ['case', 1] : [name, strength];
  }
  if ('A_ArrayExpr' in node) return ['array', 2];
  if ('RowExpr' in node) return ['row', 2];
  if ('CoalesceExpr' in node) return ['coalesce', 2];
  if ('MinMaxExpr' in node) return [node.MinMaxExpr.op === 'IS_LEAST' ? 'least' : 'greatest', 2];
  if ('SQLValueFunction' in node) {
    const name = SQL_VALUE_NAMES[node.SQLValueFunction.op ?? ''];
    return name === undefined ? [undefined, 0] : [name, 2];
  }
  return [undefined, 0];
}

/** The output column name of a select-list entry, as Postgres names it. */
export function outputName(t: ResTarget): string {
  if (t.name !== undefined) return t.name;
  return figure(t.val)[0] ?? '?column?';
}
