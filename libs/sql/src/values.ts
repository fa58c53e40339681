// Turns expression nodes into the values routing can use: constants (with casts and negative
// numbers), bind parameters, and array constants for `= ANY(...)`.
import type { Node, A_Const } from 'libpg-query';
import type { ConstValue, ParamValue, PinValue, RowValue, LiteralKind } from './types.js';
import { typeNameText } from './ast.js';

function constText(c: A_Const): { text: string | null; literal: LiteralKind } {
  if (c.isnull === true) return { text: null, literal: 'null' };
  if (c.ival !== undefined) return { text: String(c.ival.ival ?? 0), literal: 'integer' };
  if (c.fval !== undefined) {
    const text = c.fval.fval ?? '0';
    // The grammar makes integers beyond int4 range Float nodes; they are still integers.
    return { text, literal: /^[-+]?\d+$/.test(text) ? 'integer' : 'numeric' };
  }
  if (c.boolval !== undefined)
    return { text: c.boolval.boolval === true ? 'true' : 'false', literal: 'boolean' };
  if (c.sval !== undefined) return { text: c.sval.sval ?? '', literal: 'string' };
  if (c.bsval !== undefined) return { text: c.bsval.bsval ?? '', literal: 'bitstring' };
  return { text: null, literal: 'null' };
}

function negate(text: string): string {
  if (text.startsWith('-')) return text.slice(1);
  if (text.startsWith('+')) return '-' + text.slice(1);
  return '-' + text;
}

/** A constant or parameter, possibly under casts and a unary minus; undefined for anything else. */
export function pinValueOf(node: Node | undefined, typeName?: string): PinValue | undefined {
  if (node === undefined) return undefined;
  if ('A_Const' in node) {
    const { text, literal } = constText(node.A_Const);
    return { kind: 'const', text, literal, typeName } satisfies ConstValue;
  }
  if ('ParamRef' in node) {
    return {
      kind: 'param',
      index: (node.ParamRef.number ?? 1) - 1,
      isArray: false,
      typeName,
    } satisfies ParamValue;
  }
  if ('TypeCast' in node) {
    // The outermost cast is the type the comparison sees.
    return pinValueOf(node.TypeCast.arg, typeName ?? typeNameText(node.TypeCast.typeName));
  }
  if ('A_Expr' in node) {
    const e = node.A_Expr;
    const op =
      e.name?.length === 1 && e.name[0] !== undefined && 'String' in e.name[0]
        ? e.name[0].String.sval
        : undefined;
    if (e.kind === 'AEXPR_OP' && e.lexpr === undefined && (op === '-' || op === '+')) {
      const inner = pinValueOf(e.rexpr);
      if (
        inner?.kind === 'const' &&
        (inner.literal === 'integer' || inner.literal === 'numeric') &&
        inner.text !== null
      ) {
        return {
          ...inner,
          text: op === '-' ? negate(inner.text) : inner.text,
          typeName: typeName ?? inner.typeName,
        };
      }
    }
  }
  return undefined;
}

/** A VALUES item / EXECUTE argument / LIMIT: pin value, DEFAULT, or some other expression. */
export function rowValueOf(node: Node | undefined): RowValue {
  if (node !== undefined && 'SetToDefault' in node) return { kind: 'default' };
  return pinValueOf(node) ?? { kind: 'expr' };
}

/**
 * The values of the right side of `col = ANY(x)`: a parameter (an array), `ARRAY[...]`, or an
 * array literal `'{1,2}'` (with or without a cast). Undefined when not fully known.
 */
export function anyValuesOf(node: Node | undefined): PinValue[] | undefined {
  if (node === undefined) return undefined;
  let typeName: string | undefined;
  let n: Node = node;
  while ('TypeCast' in n && n.TypeCast.arg !== undefined) {
    typeName ??= typeNameText(n.TypeCast.typeName);
    n = n.TypeCast.arg;
  }
  if ('ParamRef' in n)
    return [{ kind: 'param', index: (n.ParamRef.number ?? 1) - 1, isArray: true, typeName }];
  const elementType = typeName?.endsWith('[]') === true ? typeName.slice(0, -2) : undefined;
  if ('A_ArrayExpr' in n) {
    const out: PinValue[] = [];
    for (const el of n.A_ArrayExpr.elements ?? []) {
      const v = pinValueOf(el);
      if (v === undefined) return undefined;
      out.push(
        v.typeName === undefined && elementType !== undefined ? { ...v, typeName: elementType } : v,
      );
    }
    return out;
  }
  if ('A_Const' in n && n.A_Const.sval !== undefined) {
    const items = parseArrayLiteral(n.A_Const.sval.sval ?? '');
    if (items === undefined) return undefined;
    return items.map((text) => ({
      kind: 'const',
      text,
      literal: text === null ? 'null' : 'string',
      typeName: elementType,
    }));
  }
  return undefined;
}

/**
 * Elements of a one-dimensional Postgres array literal (`{1,"a b",NULL}`), with the input rules of
 * array_in: double quotes, backslash escapes, unquoted NULL, whitespace around unquoted elements.
 * Undefined for anything it does not fully understand (nesting, dimension decorations).
 */
export function parseArrayLiteral(text: string): (string | null)[] | undefined {
  const s = text.trim();
  if (!s.startsWith('{') || !s.endsWith('}')) return undefined;
  const body = s.slice(1, -1);
  const out: (string | null)[] = [];
  if (body.trim() === '') return out;
  let i = 0;
  while (i <= body.length) {
    while (i < body.length && /\s/.test(body[i] ?? '')) i++;
    let value = '';
    let quoted = false;
    if (body[i] === '"') {
      quoted = true;
      i++;
      while (i < body.length && body[i] !== '"') {
        if (body[i] === '\\') i++;
        value += body[i] ?? '';
        i++;
      }
      if (body[i] !== '"') return undefined;
      i++;
      while (i < body.length && /\s/.test(body[i] ?? '')) i++;
    } else {
      while (i < body.length && body[i] !== ',') {
        const ch = body[i] ?? '';
        if (ch === '{' || ch === '}' || ch === '"') return undefined;
        if (ch === '\\') {
          i++;
          value += body[i] ?? '';
        } else value += ch;
        i++;
      }
      value = value.trim();
      if (value === '') return undefined;
    }
    out.push(!quoted && value.toLowerCase() === 'null' ? null : value);
    if (i >= body.length) break;
    if (body[i] !== ',') return undefined;
    i++;
  }
  return out;
}
