// HAVING across nodes is evaluated at the router over final values, so only a subset the executor
// evaluates exactly is accepted: AND / OR / NOT, comparisons and IS [NOT] NULL between aggregates,
// grouped expressions and literal constants. Anything else is refused.
import type { Node } from 'libpg-query';
import type { CompareOp, Operand, Predicate } from './types.js';

/** Where the operands that are not constants come from (the aggregate planner's hidden columns). */
export interface OperandColumns {
  hiddenColumn(expr: Node): number;
}
import { pinValueOf } from '../values.js';
import { refuse } from './nodes.js';
import { deparseNode } from './deparse.js';

const COMPARE_OPS = new Map<string, CompareOp>([
  ['=', '='],
  ['<>', '<>'],
  ['!=', '<>'],
  ['<', '<'],
  ['<=', '<='],
  ['>', '>'],
  ['>=', '>='],
]);

function unsupported(node: Node, clause: string): never {
  return refuse(`${clause} ${deparseNode(node)} is not supported across nodes`);
}

function operand(node: Node, b: OperandColumns, clause: string): Operand {
  if ('ParamRef' in node) unsupported(node, clause);
  const v = pinValueOf(node);
  if (v !== undefined) {
    if (v.kind !== 'const') unsupported(node, clause);
    // A typed constant ('2024-01-01'::date, the transaction time) is computed by the nodes as a
    // grouped value, so the router compares values of one type.
    if (v.typeName !== undefined || v.literal === 'bitstring')
      return { kind: 'column', index: b.hiddenColumn(node) };
    return { kind: 'const', text: v.text, literal: v.literal };
  }
  if ('SubLink' in node) unsupported(node, clause);
  return { kind: 'column', index: b.hiddenColumn(node) };
}

/** `clause`: the keyword refusals name (HAVING, or WHERE over a merged subquery). */
export function planHaving(node: Node, b: OperandColumns, clause = 'HAVING'): Predicate {
  if ('BoolExpr' in node) {
    const e = node.BoolExpr;
    const args = (e.args ?? []).map((a) => planHaving(a, b, clause));
    if (e.boolop === 'AND_EXPR') return { kind: 'and', args };
    if (e.boolop === 'OR_EXPR') return { kind: 'or', args };
    const arg = args[0];
    if (e.boolop === 'NOT_EXPR' && arg !== undefined && args.length === 1)
      return { kind: 'not', arg };
    return unsupported(node, clause);
  }
  if ('A_Expr' in node) {
    const e = node.A_Expr;
    const name =
      e.name?.length === 1 && e.name[0] !== undefined && 'String' in e.name[0]
        ? e.name[0].String.sval
        : undefined;
    const op = name === undefined ? undefined : COMPARE_OPS.get(name);
    if (
      e.kind !== 'AEXPR_OP' ||
      op === undefined ||
      e.lexpr === undefined ||
      e.rexpr === undefined
    ) {
      // `-5` and friends are constants, not comparisons: let them fall through as operands.
      if (pinValueOf(node) === undefined) return unsupported(node, clause);
      return { kind: 'operand', arg: operand(node, b, clause) };
    }
    return {
      kind: 'compare',
      op,
      left: operand(e.lexpr, b, clause),
      right: operand(e.rexpr, b, clause),
    };
  }
  if ('NullTest' in node) {
    const arg = node.NullTest.arg ?? unsupported(node, clause);
    if (node.NullTest.argisrow === true) unsupported(node, clause);
    return {
      kind: 'is_null',
      negated: node.NullTest.nulltesttype === 'IS_NOT_NULL',
      arg: operand(arg, b, clause),
    };
  }
  // A bare boolean: bool_and(x), a grouped boolean column, TRUE.
  return { kind: 'operand', arg: operand(node, b, clause) };
}
