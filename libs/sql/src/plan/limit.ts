// LIMIT / OFFSET across nodes: each node returns at most count + offset rows (the first rows of
// the merged order can only come from each node's own first count + offset rows); the router skips
// `offset` and passes `count`. Only integer constants and bind parameters are understood.
import type { Node, SelectStmt } from 'libpg-query';
import type { LimitValue } from './types.js';
import { pinValueOf } from '../values.js';
import { refuse } from './nodes.js';

const INT8_MAX = 9223372036854775807n;

export interface LimitPlan {
  readonly count: LimitValue | undefined;
  readonly offset: LimitValue | undefined;
  /** The leaf's LIMIT expression (undefined: none) when leaves may be cut short. */
  readonly leafCount: Node | undefined;
  /** The leaf keeps the statement's own LIMIT/OFFSET so that it raises Postgres's own error. */
  readonly leafKeepsOriginal: boolean;
}

function limitValue(node: Node | undefined, what: string): LimitValue | undefined {
  if (node === undefined) return undefined;
  const v = pinValueOf(node);
  if (v === undefined)
    refuse(
      `${what} expressions other than constants and parameters are not supported across nodes`,
    );
  if (v.kind === 'param') return { kind: 'param', index: v.index };
  if (v.text === null) return undefined; // LIMIT ALL / LIMIT NULL / OFFSET NULL
  if (v.literal !== 'integer' || v.typeName !== undefined)
    refuse(`${what} must be an integer constant or a parameter across nodes`);
  return { kind: 'const', value: BigInt(v.text).toString() };
}

function intConst(value: bigint): Node {
  if (value >= -2147483648n && value <= 2147483647n)
    return { A_Const: value === 0n ? { ival: {} } : { ival: { ival: Number(value) } } };
  return { A_Const: { fval: { fval: value.toString() } } };
}

function asInt8(v: LimitValue): Node {
  if (v.kind === 'const') return intConst(BigInt(v.value));
  return {
    TypeCast: {
      arg: { ParamRef: { number: v.index + 1 } },
      typeName: {
        names: [{ String: { sval: 'pg_catalog' } }, { String: { sval: 'int8' } }],
        typemod: -1,
      },
    },
  };
}

export function planLimit(s: SelectStmt): LimitPlan {
  const count = limitValue(s.limitCount, 'LIMIT');
  const offset = limitValue(s.limitOffset, 'OFFSET');
  if (count === undefined) return { count, offset, leafCount: undefined, leafKeepsOriginal: false };
  if (offset === undefined)
    return { count, offset, leafCount: s.limitCount, leafKeepsOriginal: false };
  if (count.kind === 'const' && offset.kind === 'const') {
    const c = BigInt(count.value);
    const o = BigInt(offset.value);
    // A negative value is an error Postgres raises; the leaf raises it with Postgres's words.
    if (c < 0n || o < 0n) return { count, offset, leafCount: undefined, leafKeepsOriginal: true };
    const sum = c + o;
    return {
      count,
      offset,
      leafCount: sum > INT8_MAX ? undefined : intConst(sum),
      leafKeepsOriginal: false,
    };
  }
  const leafCount: Node = {
    A_Expr: {
      kind: 'AEXPR_OP',
      name: [{ String: { sval: '+' } }],
      lexpr: asInt8(count),
      rexpr: asInt8(offset),
    },
  };
  return { count, offset, leafCount, leafKeepsOriginal: false };
}
