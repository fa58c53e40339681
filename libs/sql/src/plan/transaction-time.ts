// now(), current_timestamp, current_date and the other transaction-time functions across nodes:
// each node would answer with its own transaction's start, so the leaf SQL carries a placeholder
// literal instead, and the router binds one value per transaction (bindTransactionTime) before
// sending it: the same instant on every node, converted by each node in the session's time zone
// exactly as the function would convert it (::date for current_date, ::timetz, ::timestamp(p)).
import type { Node, ResTarget, SelectStmt, TypeName } from 'libpg-query';
import type { PlanNode, ReadPlan } from './types.js';
import { builtinName } from './nodes.js';
import { outputName } from './names.js';

/** The placeholder's text in leaf SQL; a statement that contains it itself is refused. */
export const TRANSACTION_TIME_PLACEHOLDER = '__tessera_transaction_time__';

const QUOTED = `'${TRANSACTION_TIME_PLACEHOLDER}'`;

/**
 * The query the router may send to the node a transaction started on, to learn that transaction's
 * start as a literal bindTransactionTime takes (UTC, microseconds, explicit offset).
 */
export const TRANSACTION_TIME_SQL =
  "select to_char(now() at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'";

function typeName(name: string, typmod: number): TypeName {
  const t: TypeName = {
    names: [{ String: { sval: 'pg_catalog' } }, { String: { sval: name } }],
    typemod: -1,
  };
  if (typmod >= 0) t.typmods = [{ A_Const: { ival: typmod === 0 ? {} : { ival: typmod } } }];
  return t;
}

function placeholder(): Node {
  return {
    TypeCast: {
      arg: { A_Const: { sval: { sval: TRANSACTION_TIME_PLACEHOLDER } } },
      typeName: typeName('timestamptz', -1),
    },
  };
}

function castTo(name: string, typmod: number): Node {
  return { TypeCast: { arg: placeholder(), typeName: typeName(name, typmod) } };
}

// SQLValueFunction ops: the type the value is converted to (with its precision, for the _N forms).
const VALUE_FUNCTIONS: Record<string, string | undefined> = {
  SVFOP_CURRENT_DATE: 'date',
  SVFOP_CURRENT_TIME: 'timetz',
  SVFOP_CURRENT_TIME_N: 'timetz',
  SVFOP_CURRENT_TIMESTAMP: 'timestamptz',
  SVFOP_CURRENT_TIMESTAMP_N: 'timestamptz',
  SVFOP_LOCALTIME: 'time',
  SVFOP_LOCALTIME_N: 'time',
  SVFOP_LOCALTIMESTAMP: 'timestamp',
  SVFOP_LOCALTIMESTAMP_N: 'timestamp',
};

/** The node's replacement, or undefined when it is not a transaction-time function. */
function replacement(node: Record<string, unknown>): Node | undefined {
  const f = node['FuncCall'] as Parameters<typeof builtinName>[0] | undefined;
  if (f !== undefined) {
    const name = builtinName(f);
    const plain = (f.args?.length ?? 0) === 0 && f.over === undefined && f.agg_star !== true;
    if (plain && (name === 'now' || name === 'transaction_timestamp')) return placeholder();
    return undefined;
  }
  const v = node['SQLValueFunction'] as { op?: string; typmod?: number } | undefined;
  const target = v === undefined ? undefined : VALUE_FUNCTIONS[v.op ?? ''];
  if (v === undefined || target === undefined) return undefined;
  const typmod = (v.op ?? '').endsWith('_N') ? (v.typmod ?? -1) : -1;
  if (target === 'timestamptz' && typmod < 0) return placeholder();
  return castTo(target, typmod);
}

function rewrite(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  let found = false;
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    const child = o[key];
    if (child !== null && typeof child === 'object' && !Array.isArray(child)) {
      const r = replacement(child as Record<string, unknown>);
      if (r !== undefined) {
        o[key] = r;
        found = true;
        continue;
      }
    }
    if (rewrite(child)) found = true;
  }
  return found;
}

/**
 * Replaces every transaction-time function in `s` (subqueries included) by the placeholder, in
 * place. Select-list items that held one keep their column name through an alias. True if any.
 */
export function rewriteTransactionTime(s: SelectStmt): boolean {
  for (const n of s.targetList ?? []) {
    if (!('ResTarget' in n)) continue;
    const t: ResTarget = n.ResTarget;
    if (t.name === undefined && t.val !== undefined && rewrite({ probe: structuredClone(t.val) }))
      t.name = outputName(t);
  }
  return rewrite(s);
}

function bindNode(node: PlanNode, literal: string): PlanNode {
  if (node.kind === 'scatter') return { ...node, sql: node.sql.replaceAll(QUOTED, literal) };
  if (node.kind === 'merge_sort')
    return { ...node, input: bindNode(node.input, literal) as typeof node.input };
  if (node.kind === 'aggregate')
    return { ...node, input: bindNode(node.input, literal) as typeof node.input };
  return { ...node, input: bindNode(node.input, literal) } as PlanNode;
}

/**
 * The plan with the transaction's time in its leaf SQL. `timestamptz` is the instant as Postgres
 * reads it back exactly, e.g. `2026-12-01 21:17:14.123456+00` (formatTransactionTime, or the
 * answer of TRANSACTION_TIME_SQL); the same value for every statement of one transaction.
 */
export function bindTransactionTime(plan: ReadPlan, timestamptz: string): ReadPlan {
  if (!plan.usesTransactionTime) return plan;
  if (!/^[0-9: .+-]+$/.test(timestamptz))
    throw new RangeError(`bindTransactionTime: not a timestamptz literal: ${timestamptz}`);
  const literal = `'${timestamptz}'`;
  return {
    ...plan,
    root: bindNode(plan.root, literal),
    leafSql: plan.leafSql.replaceAll(QUOTED, literal),
    usesTransactionTime: false,
  };
}

/** Microseconds since the Unix epoch as a timestamptz literal in UTC (the router's own clock). */
export function formatTransactionTime(epochMicros: bigint): string {
  const ms = Number(epochMicros / 1000n);
  const micros = Number(((epochMicros % 1_000_000n) + 1_000_000n) % 1_000_000n);
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${String(micros).padStart(6, '0')}+00`;
}
