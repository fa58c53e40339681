// Key pins and join equalities: conditions in the top-level AND of WHERE and of join ONs that tie a
// column of a FROM item to constants/parameters or to a column of another FROM item.
import type { Node, JoinExpr, RangeVar, A_Expr } from 'libpg-query';
import type { ColumnAt, ColumnEquality, KeyPin, PinValue, WhereFacts } from './types.js';
import { stringList } from './ast.js';
import { anyValuesOf, pinValueOf } from './values.js';

type JoinType = ColumnEquality['joinType'];

/** A FROM item visible at the statement's top level. */
interface ScopeItem {
  readonly refName: string | undefined;
  readonly schema: string | undefined;
  readonly relname: string | undefined;
  readonly hasAlias: boolean;
  readonly tableIndex: number | undefined;
}

interface Conjunct {
  readonly expr: Node;
  readonly via: 'where' | 'on';
  readonly joinType: JoinType;
}

export class Scope {
  readonly items: ScopeItem[] = [];
  /** RangeVars of the scope, so the collector can mark them `top`. */
  readonly rangeVars = new Set<object>();
  readonly joins: JoinExpr[] = [];
  hasNaturalJoin = false;
  private readonly joinTypes = new Map<JoinExpr, JoinType>();
  /** Per item, the RangeVar it came from (undefined for subqueries, functions, join aliases). */
  private readonly rangeVarOrder: (RangeVar | undefined)[] = [];

  /** Adds a FROM item (RangeVar, JoinExpr, RangeSubselect, RangeFunction, ...). */
  addFromItem(node: Node): void {
    if ('RangeVar' in node) this.addRangeVar(node.RangeVar);
    else if ('JoinExpr' in node) {
      const j = node.JoinExpr;
      this.joinTypes.set(j, joinTypeOf(j));
      if (j.isNatural === true) this.hasNaturalJoin = true;
      if (j.larg !== undefined) this.addFromItem(j.larg);
      if (j.rarg !== undefined) this.addFromItem(j.rarg);
      // Inner joins first, so conditions come out in source order.
      this.joins.push(j);
      if (j.alias?.aliasname !== undefined) this.addOpaque(j.alias.aliasname);
    } else if ('RangeSubselect' in node) this.addOpaque(node.RangeSubselect.alias?.aliasname);
    else if ('RangeFunction' in node) this.addOpaque(node.RangeFunction.alias?.aliasname);
    else if ('RangeTableFunc' in node) this.addOpaque(node.RangeTableFunc.alias?.aliasname);
    else if ('RangeTableSample' in node && node.RangeTableSample.relation !== undefined) {
      this.addFromItem(node.RangeTableSample.relation);
    } else this.addOpaque(undefined);
  }

  addRangeVar(rv: RangeVar): void {
    this.rangeVars.add(rv);
    this.items.push({
      refName: rv.alias?.aliasname ?? rv.relname,
      schema: rv.schemaname,
      relname: rv.relname,
      hasAlias: rv.alias?.aliasname !== undefined,
      tableIndex: undefined,
    });
    this.rangeVarOrder.push(rv);
  }

  private addOpaque(alias: string | undefined): void {
    this.items.push({
      refName: alias,
      schema: undefined,
      relname: undefined,
      hasAlias: true,
      tableIndex: undefined,
    });
    this.rangeVarOrder.push(undefined);
  }

  /** Fills in table indexes once the collector has numbered the relations. */
  resolveIndexes(indexOf: ReadonlyMap<object, number>): void {
    this.items.forEach((item, i) => {
      const rv = this.rangeVarOrder[i];
      if (rv !== undefined) this.items[i] = { ...item, tableIndex: indexOf.get(rv) };
    });
  }

  joinTypeOf(j: JoinExpr): JoinType {
    return this.joinTypes.get(j) ?? 'inner';
  }

  /** The FROM item a column reference belongs to; `ambiguous` for unqualified names in a multi-item scope. */
  resolve(fields: readonly string[]): { at: ColumnAt; ambiguous: boolean } | undefined {
    const column = fields[fields.length - 1];
    if (column === undefined || column === '*') return undefined;
    if (fields.length === 1) {
      if (this.items.length === 1) {
        const only = this.items[0];
        if (only === undefined) return undefined;
        return {
          at: { table: only.refName, tableIndex: only.tableIndex, column },
          ambiguous: false,
        };
      }
      return { at: { table: undefined, tableIndex: undefined, column }, ambiguous: true };
    }
    const table = fields[fields.length - 2];
    const schema = fields.length >= 3 ? fields[fields.length - 3] : undefined;
    const matches = this.items.filter(
      (it) =>
        it.refName === table && (schema === undefined || (!it.hasAlias && it.schema === schema)),
    );
    const found = matches.length === 1 ? matches[0] : undefined;
    if (found === undefined) return undefined;
    return { at: { table: found.refName, tableIndex: found.tableIndex, column }, ambiguous: false };
  }

  /** For `JOIN ... USING (col)`: the item supplying `col` on one side of a join. */
  usingSide(side: Node | undefined, column: string): ColumnAt | undefined {
    if (side === undefined) return undefined;
    if ('RangeVar' in side)
      return this.resolve([side.RangeVar.alias?.aliasname ?? side.RangeVar.relname ?? '', column])
        ?.at;
    if ('JoinExpr' in side) {
      const j = side.JoinExpr;
      if (j.alias !== undefined) return undefined;
      // A merged USING column: equal to the left side's (for outer joins, COALESCE: give up).
      if (stringList(j.usingClause).includes(column) && this.joinTypeOf(j) === 'inner')
        return this.usingSide(j.larg, column);
      return undefined;
    }
    if ('RangeSubselect' in side && side.RangeSubselect.alias?.aliasname !== undefined) {
      return this.resolve([side.RangeSubselect.alias.aliasname, column])?.at;
    }
    return undefined;
  }
}

function joinTypeOf(j: JoinExpr): JoinType {
  switch (j.jointype) {
    case 'JOIN_LEFT':
      return 'left';
    case 'JOIN_RIGHT':
      return 'right';
    case 'JOIN_FULL':
      return 'full';
    default:
      return 'inner';
  }
}

function flattenAnd(expr: Node | undefined, out: Node[]): void {
  if (expr === undefined) return;
  if ('BoolExpr' in expr && expr.BoolExpr.boolop === 'AND_EXPR') {
    for (const a of expr.BoolExpr.args ?? []) flattenAnd(a, out);
    return;
  }
  out.push(expr);
}

function operatorName(e: A_Expr): string | undefined {
  const names = stringList(e.name);
  if (names.length === 2 && names[0] === 'pg_catalog') return names[1];
  return names.length === 1 ? names[0] : undefined;
}

function columnFields(node: Node | undefined): string[] | undefined {
  if (node === undefined || !('ColumnRef' in node)) return undefined;
  const fields = node.ColumnRef.fields ?? [];
  if (fields.some((f) => !('String' in f))) return undefined;
  return stringList(fields);
}

/** Collects pins and equalities for a statement whose FROM items are in `scope`. */
export function whereFacts(scope: Scope, where: Node | undefined, isCurrentOf = false): WhereFacts {
  const conjuncts: Conjunct[] = [];
  const whereList: Node[] = [];
  flattenAnd(where, whereList);
  for (const e of whereList) conjuncts.push({ expr: e, via: 'where', joinType: 'inner' });
  const equalities: ColumnEquality[] = [];
  for (const j of scope.joins) {
    const joinType = scope.joinTypeOf(j);
    const list: Node[] = [];
    flattenAnd(j.quals, list);
    for (const e of list) conjuncts.push({ expr: e, via: 'on', joinType });
    for (const column of stringList(j.usingClause)) {
      const left = scope.usingSide(j.larg, column);
      const right = scope.usingSide(j.rarg, column);
      if (left !== undefined && right !== undefined)
        equalities.push({ left, right, via: 'using', joinType });
    }
  }

  const pins: KeyPin[] = [];
  let hasOr = false;
  for (const c of conjuncts) {
    const e = c.expr;
    if ('BoolExpr' in e) {
      if (c.joinType === 'inner') hasOr = true;
      continue;
    }
    if (!('A_Expr' in e)) continue;
    const a = e.A_Expr;
    if (operatorName(a) !== '=') continue;
    const pinAllowed = c.joinType === 'inner';
    if (a.kind === 'AEXPR_OP') {
      const lf = columnFields(a.lexpr);
      const rf = columnFields(a.rexpr);
      if (lf !== undefined && rf !== undefined) {
        const l = scope.resolve(lf);
        const r = scope.resolve(rf);
        if (l === undefined || r === undefined || l.ambiguous || r.ambiguous) continue;
        if (l.at.table === r.at.table) continue;
        equalities.push({ left: l.at, right: r.at, via: c.via, joinType: c.joinType });
        continue;
      }
      if (!pinAllowed) continue;
      if (lf !== undefined) addPin(pins, scope, lf, pinValueOf(a.rexpr), c.via);
      else if (rf !== undefined) addPin(pins, scope, rf, pinValueOf(a.lexpr), c.via);
    } else if (a.kind === 'AEXPR_IN' && pinAllowed) {
      const lf = columnFields(a.lexpr);
      const list =
        a.rexpr !== undefined && 'List' in a.rexpr ? (a.rexpr.List.items ?? []) : undefined;
      if (lf === undefined || list === undefined) continue;
      const values: PinValue[] = [];
      let known = true;
      for (const item of list) {
        const v = pinValueOf(item);
        if (v === undefined) known = false;
        else values.push(v);
      }
      if (known) addPinValues(pins, scope, lf, values, c.via);
    } else if (a.kind === 'AEXPR_OP_ANY' && pinAllowed) {
      const lf = columnFields(a.lexpr);
      const values = anyValuesOf(a.rexpr);
      if (lf !== undefined && values !== undefined) addPinValues(pins, scope, lf, values, c.via);
    }
  }
  return {
    hasWhere: where !== undefined,
    pins,
    joinEqualities: equalities,
    hasOr,
    hasNaturalJoin: scope.hasNaturalJoin,
    isCurrentOf,
  };
}

function addPin(
  pins: KeyPin[],
  scope: Scope,
  fields: string[],
  value: PinValue | undefined,
  via: 'where' | 'on',
): void {
  if (value !== undefined) addPinValues(pins, scope, fields, [value], via);
}

function addPinValues(
  pins: KeyPin[],
  scope: Scope,
  fields: string[],
  values: PinValue[],
  via: 'where' | 'on',
): void {
  const resolved = scope.resolve(fields);
  if (resolved === undefined) return;
  const matchesNothing = values.every((v) => v.kind === 'const' && v.text === null);
  pins.push({ ...resolved.at, values, ambiguous: resolved.ambiguous, matchesNothing, source: via });
}
