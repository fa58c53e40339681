// Expressions over aggregate results (`count(*)::int`, `coalesce(sum(x), 0)`, `sum(a) / count(*)`,
// `round(avg(x), 2)`) as the router evaluates them: aggregates and grouped sub-expressions become
// columns of the final row, the rest a small expression language (types.ts `Expr`) whose
// evaluation in @tessera/merge follows Postgres exactly. Anything else is refused here.
import type { Node, TypeName } from 'libpg-query';
import type { Expr, ScalarType } from './types.js';
import { stringList } from '../ast.js';
import { builtinName, containsAggregate, isAggregateCall, refuse } from './nodes.js';
import { deparseNode } from './deparse.js';

/** What the translation needs from the aggregate planner: a final column for a sub-expression. */
export interface ColumnSource {
  /** The final column of an aggregate call or of a grouped (aggregate-free) expression. */
  column(node: Node): number;
}

const CAST_TYPES: Record<string, ScalarType> = {
  int2: 'int2',
  int4: 'int4',
  int8: 'int8',
  numeric: 'numeric',
  text: 'text',
};

const OPERATORS = new Set(['+', '-', '*', '/', '%']);

function unsupported(node: Node): never {
  let text: string;
  try {
    text = deparseNode(node);
  } catch {
    text = 'an expression';
  }
  return refuse(`the expression ${text} over aggregate results is not supported across nodes`);
}

function castType(t: TypeName | undefined, node: Node): { type: ScalarType; typmod: number } {
  const names = stringList(t?.names);
  const name =
    names.length === 2 && names[0] === 'pg_catalog'
      ? names[1]
      : names.length === 1
        ? names[0]
        : undefined;
  const type = name === undefined ? undefined : CAST_TYPES[name];
  if (type === undefined || (t?.arrayBounds?.length ?? 0) > 0) return unsupported(node);
  const mods = (t?.typmods ?? []).map((m) =>
    'A_Const' in m && m.A_Const.ival !== undefined ? (m.A_Const.ival.ival ?? 0) : undefined,
  );
  if (mods.length === 0) return { type, typmod: -1 };
  if (type !== 'numeric' || mods.length > 2 || mods.some((m) => m === undefined))
    return unsupported(node);
  const precision = mods[0] as number;
  const scale = mods[1] ?? 0;
  // numeric's own typmod checks (1..1000 digits, -1000..1000 scale); outside them Postgres errors.
  if (precision < 1 || precision > 1000 || scale < -1000 || scale > 1000) return unsupported(node);
  return { type, typmod: ((precision << 16) | (scale & 0xffff)) + 4 };
}

function constant(node: Node): Expr | undefined {
  if (!('A_Const' in node)) return undefined;
  const c = node.A_Const;
  if (c.ival !== undefined)
    return { kind: 'const', text: String(c.ival.ival ?? 0), literal: 'integer' };
  if (c.fval !== undefined) {
    const text = c.fval.fval ?? '0';
    return { kind: 'const', text, literal: /^[-+]?\d+$/.test(text) ? 'integer' : 'numeric' };
  }
  return unsupported(node);
}

/** `node` (which holds an aggregate call of this level) as an Expr over final columns. */
export function toExpr(node: Node, columns: ColumnSource): Expr {
  if (!containsAggregate(node)) {
    const c = constant(node);
    if (c !== undefined) return c;
    if ('ParamRef' in node || 'SubLink' in node) return unsupported(node);
    return { kind: 'column', index: columns.column(node) };
  }
  if ('FuncCall' in node) {
    const f = node.FuncCall;
    if (isAggregateCall(f)) return { kind: 'column', index: columns.column(node) };
    const name = builtinName(f);
    const args = f.args ?? [];
    if (
      (name === 'round' || name === 'trunc') &&
      f.over === undefined &&
      f.agg_star !== true &&
      f.agg_distinct !== true &&
      f.func_variadic !== true &&
      (args.length === 1 || args.length === 2)
    )
      return {
        kind: name,
        arg: toExpr(args[0] as Node, columns),
        digits: args[1] === undefined ? undefined : toExpr(args[1], columns),
      };
    return unsupported(node);
  }
  if ('TypeCast' in node) {
    const arg = node.TypeCast.arg ?? unsupported(node);
    const { type, typmod } = castType(node.TypeCast.typeName, node);
    return { kind: 'cast', arg: toExpr(arg, columns), type, typmod };
  }
  if ('CoalesceExpr' in node)
    return {
      kind: 'coalesce',
      args: (node.CoalesceExpr.args ?? []).map((a) => toExpr(a, columns)),
    };
  if ('A_Expr' in node) {
    const e = node.A_Expr;
    const names = stringList(e.name);
    const op = names.length === 2 && names[0] === 'pg_catalog' ? names[1] : names[0];
    if (names.length > 2 || op === undefined) return unsupported(node);
    if (e.kind === 'AEXPR_NULLIF' && op === '=' && e.lexpr !== undefined && e.rexpr !== undefined)
      return { kind: 'nullif', left: toExpr(e.lexpr, columns), right: toExpr(e.rexpr, columns) };
    if (e.kind !== 'AEXPR_OP' || !OPERATORS.has(op) || e.rexpr === undefined)
      return unsupported(node);
    if (e.lexpr === undefined) {
      if (op === '-') return { kind: 'negate', arg: toExpr(e.rexpr, columns) };
      if (op === '+') return toExpr(e.rexpr, columns);
      return unsupported(node);
    }
    return {
      kind: 'op',
      op: op as '+' | '-' | '*' | '/' | '%',
      left: toExpr(e.lexpr, columns),
      right: toExpr(e.rexpr, columns),
    };
  }
  return unsupported(node);
}

/** A short rendering for EXPLAIN and golden plans. */
export function exprText(e: Expr, col: (i: number) => string): string {
  switch (e.kind) {
    case 'column':
      return col(e.index);
    case 'const':
      return e.text;
    case 'op':
      return `(${exprText(e.left, col)} ${e.op} ${exprText(e.right, col)})`;
    case 'negate':
      return `(- ${exprText(e.arg, col)})`;
    case 'cast':
      return `${exprText(e.arg, col)}::${e.type}${e.typmod >= 4 ? `(${(e.typmod - 4) >> 16}, ${(e.typmod - 4) & 0xffff})` : ''}`;
    case 'coalesce':
      return `coalesce(${e.args.map((a) => exprText(a, col)).join(', ')})`;
    case 'nullif':
      return `nullif(${exprText(e.left, col)}, ${exprText(e.right, col)})`;
    case 'round':
    case 'trunc':
      return `${e.kind}(${exprText(e.arg, col)}${e.digits === undefined ? '' : `, ${exprText(e.digits, col)}`})`;
  }
}
