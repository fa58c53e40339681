// Parse-tree helpers the planner needs: structural equality (what Postgres would treat as "the same
// expression" before analysis), deep copies, searches for aggregates and subqueries, refusals.
import type { Node, FuncCall } from 'libpg-query';
import { isAggregateSyntax } from '../aggregates.js';
import { stringList } from '../ast.js';

/** Thrown inside the planner; planRead turns it into `{ kind: 'refuse', reason }`. */
export class PlanRefusal extends Error {
  override readonly name = 'PlanRefusal';
}

export function refuse(reason: string): never {
  throw new PlanRefusal(reason);
}

// Positions say where text was, not what it means; two spellings of one expression differ only there.
const POSITION_KEYS = new Set([
  'location',
  'rexpr_list_start',
  'rexpr_list_end',
  'list_start',
  'list_end',
  'stmt_location',
]);

/** A canonical text of an expression tree: source positions removed, keys in sorted order. */
export function canonical(
  node: unknown,
  drop: (key: string, value: unknown) => boolean = () => false,
): string {
  return JSON.stringify(node, (key, value: unknown) => {
    if (POSITION_KEYS.has(key) || drop(key, value)) return undefined;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) sorted[k] = (value as Record<string, unknown>)[k];
    return sorted;
  });
}

export function sameExpr(a: Node, b: Node): boolean {
  return canonical(a) === canonical(b);
}

export function clone<T>(node: T): T {
  return structuredClone(node);
}

/** The function name without a `pg_catalog.` qualifier; undefined for other schemas. */
export function builtinName(f: FuncCall): string | undefined {
  const names = stringList(f.funcname);
  if (names.length === 1) return names[0];
  if (names.length === 2 && names[0] === 'pg_catalog') return names[1];
  return undefined;
}

/** The last part of the function name as written: the column name Postgres gives a call. */
export function callColumnName(f: FuncCall): string {
  const names = stringList(f.funcname);
  return names[names.length - 1] ?? '?column?';
}

/** A call that is (or, by its syntax, must be) an aggregate, and not used as a window function. */
export function isAggregateCall(f: FuncCall): boolean {
  return f.over === undefined && isAggregateSyntax(f);
}

/** Visits every node object under `value` (subqueries included), depth first. */
export function walk(value: unknown, visit: (tag: string, body: unknown) => void): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) walk(v, visit);
    return;
  }
  const o = value as Record<string, unknown>;
  for (const key in o) {
    const v = o[key];
    if (/^[A-Z]/.test(key)) visit(key, v);
    walk(v, visit);
  }
}

export function containsTag(value: unknown, tags: ReadonlySet<string>): boolean {
  let found = false;
  walk(value, (tag) => {
    if (tags.has(tag)) found = true;
  });
  return found;
}

/** An aggregate call of this query level anywhere under `value` (subqueries are not entered). */
export function containsAggregate(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(containsAggregate);
  const o = value as Record<string, unknown>;
  for (const key in o) {
    if (key === 'SubLink' || key === 'SelectStmt') continue;
    const v = o[key];
    if (key === 'FuncCall' && isAggregateCall(v as FuncCall)) return true;
    if (containsAggregate(v)) return true;
  }
  return false;
}

/** A short SQL-ish rendering of an expression for refusal sentences. */
export function describe(node: Node, deparse: (n: Node) => string): string {
  try {
    const text = deparse(node);
    return text.length > 60 ? text.slice(0, 57) + '...' : text;
  } catch {
    return 'an expression';
  }
}
