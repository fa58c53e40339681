// Merging partial aggregates into the exact final values Postgres prints: count and int8 sums
// as BigInt (overflow raises Postgres's `bigint out of range`, as its int8pl combine step would),
// numeric sums as exact decimals with the largest scale, avg as numeric_div of sum by count,
// min / max keeping the winning node value as it came, bool_and / bool_or, count(DISTINCT) over
// typed keys. Partials are read in the format the node sent; computed results are text.
import type { AggregateFn } from '@tessera/sql';
import type { FieldDescription, Row } from './types.js';
import { OID, typeOps } from './compare.js';
import type { TypeOps } from './compare.js';
import { addDecimal, divideDecimal, formatDecimal, fromBigInt } from './decimal.js';
import { readBool, readDecimal, readInteger } from './values.js';
import type { Decimal } from './decimal.js';
import { MergeError, SQLSTATE_NUMERIC_VALUE_OUT_OF_RANGE, unsupported } from './errors.js';

const INT8_MIN = -(1n << 63n);
const INT8_MAX = (1n << 63n) - 1n;

export interface Accumulator {
  add(row: Row): void;
  result(): Buffer | null;
}

/** Builds accumulators of one aggregate column; created once per query, `make()` once per group. */
export interface AggregateKind {
  readonly typeOid: number;
  readonly typeSize: number;
  readonly typeModifier: number;
  /** The result's format: min / max keep the node's, computed results are text. */
  readonly format: number;
  make(): Accumulator;
}

function int8Add(a: bigint, b: bigint): bigint {
  const s = a + b;
  if (s < INT8_MIN || s > INT8_MAX)
    throw new MergeError(SQLSTATE_NUMERIC_VALUE_OUT_OF_RANGE, 'bigint out of range');
  return s;
}

function requireType(
  field: FieldDescription | undefined,
  oids: readonly number[],
  what: string,
): FieldDescription {
  if (field === undefined || !oids.includes(field.typeOid))
    throw unsupported(
      `${what} over values of type OID ${field?.typeOid ?? '?'} is not supported across nodes`,
    );
  return field;
}

function floatRefusal(field: FieldDescription | undefined, fn: string): void {
  if (field?.typeOid === OID.float4 || field?.typeOid === OID.float8)
    throw unsupported(
      `${fn}() over float4/float8 is not supported across nodes: the result depends on the order of summation`,
    );
}

class CountAcc implements Accumulator {
  private total = 0n;
  constructor(
    private readonly column: number,
    private readonly field: FieldDescription,
  ) {}
  add(row: Row): void {
    const v = row[this.column];
    if (v !== null && v !== undefined) this.total = int8Add(this.total, readInteger(v, this.field));
  }
  result(): Buffer {
    return Buffer.from(this.total.toString());
  }
}

class Int8SumAcc implements Accumulator {
  private total: bigint | undefined;
  constructor(
    private readonly column: number,
    private readonly field: FieldDescription,
  ) {}
  add(row: Row): void {
    const v = row[this.column];
    if (v === null || v === undefined) return;
    const x = readInteger(v, this.field);
    this.total = this.total === undefined ? x : int8Add(this.total, x);
  }
  result(): Buffer | null {
    return this.total === undefined ? null : Buffer.from(this.total.toString());
  }
}

class NumericSumAcc implements Accumulator {
  private total: Decimal | undefined;
  constructor(
    private readonly column: number,
    private readonly field: FieldDescription,
  ) {}
  add(row: Row): void {
    const v = row[this.column];
    if (v === null || v === undefined) return;
    const x = readDecimal(v, this.field);
    this.total = this.total === undefined ? x : addDecimal(this.total, x);
  }
  get value(): Decimal | undefined {
    return this.total;
  }
  result(): Buffer | null {
    return this.total === undefined ? null : Buffer.from(formatDecimal(this.total));
  }
}

class AvgAcc implements Accumulator {
  private readonly sum: NumericSumAcc;
  private readonly count: CountAcc;
  private n = 0n;
  constructor(
    sumColumn: number,
    sumField: FieldDescription,
    private readonly countColumn: number,
    private readonly countField: FieldDescription,
  ) {
    this.sum = new NumericSumAcc(sumColumn, sumField);
    this.count = new CountAcc(countColumn, countField);
  }
  add(row: Row): void {
    this.sum.add(row);
    const c = row[this.countColumn];
    if (c !== null && c !== undefined) this.n += readInteger(c, this.countField);
  }
  result(): Buffer | null {
    const sum = this.sum.value;
    if (this.n === 0n || sum === undefined) return null;
    return Buffer.from(
      formatDecimal(divideDecimal(sum, fromBigInt(this.n) as Decimal & { kind: 'finite' })),
    );
  }
}

class ExtremeAcc implements Accumulator {
  private best: { raw: Buffer; decoded: unknown } | undefined;
  constructor(
    private readonly column: number,
    private readonly ops: TypeOps,
    private readonly wantMax: boolean,
  ) {}
  add(row: Row): void {
    const v = row[this.column];
    if (v === null || v === undefined) return;
    const decoded = this.ops.decode(v);
    if (this.best === undefined) {
      this.best = { raw: v, decoded };
      return;
    }
    const c = this.ops.compare(decoded, this.best.decoded);
    if (this.wantMax ? c > 0 : c < 0) this.best = { raw: v, decoded };
  }
  result(): Buffer | null {
    return this.best?.raw ?? null;
  }
}

class BoolAcc implements Accumulator {
  private value: boolean | undefined;
  constructor(
    private readonly column: number,
    private readonly field: FieldDescription,
    private readonly isAnd: boolean,
  ) {}
  add(row: Row): void {
    const v = row[this.column];
    if (v === null || v === undefined) return;
    const b = readBool(v, this.field);
    this.value = this.value === undefined ? b : this.isAnd ? this.value && b : this.value || b;
  }
  result(): Buffer | null {
    return this.value === undefined ? null : Buffer.from(this.value ? 't' : 'f');
  }
}

class CountDistinctAcc implements Accumulator {
  private readonly seen = new Set<string>();
  constructor(
    private readonly column: number,
    private readonly ops: TypeOps,
  ) {}
  add(row: Row): void {
    const v = row[this.column];
    if (v !== null && v !== undefined) this.seen.add(this.ops.key(this.ops.decode(v)));
  }
  result(): Buffer {
    return Buffer.from(String(this.seen.size));
  }
}

const INT8 = { typeOid: OID.int8, typeSize: 8, typeModifier: -1, format: 0 };
const NUMERIC = { typeOid: OID.numeric, typeSize: -1, typeModifier: -1, format: 0 };
const BOOL = { typeOid: OID.bool, typeSize: 1, typeModifier: -1, format: 0 };

/** Checks the partial columns' types and returns the final column's type and accumulators. */
export function aggregateKind(
  fn: AggregateFn,
  inputs: readonly number[],
  leafFields: readonly FieldDescription[],
  textCollationIsBytewise: boolean,
): AggregateKind {
  const c0 = inputs[0] ?? -1;
  const f0 = leafFields[c0];
  switch (fn) {
    case 'count': {
      const f = requireType(f0, [OID.int8], 'count');
      return { ...INT8, make: () => new CountAcc(c0, f) };
    }
    case 'sum': {
      floatRefusal(f0, 'sum');
      const f = requireType(f0, [OID.int8, OID.numeric], 'sum');
      return f.typeOid === OID.int8
        ? { ...INT8, make: () => new Int8SumAcc(c0, f) }
        : { ...NUMERIC, make: () => new NumericSumAcc(c0, f) };
    }
    case 'avg': {
      floatRefusal(f0, 'avg');
      const sum = requireType(f0, [OID.int8, OID.numeric], 'avg');
      const c1 = inputs[1] ?? -1;
      const count = requireType(leafFields[c1], [OID.int8], 'avg');
      return { ...NUMERIC, make: () => new AvgAcc(c0, sum, c1, count) };
    }
    case 'min':
    case 'max': {
      const ops = typeOps(f0?.typeOid ?? 0, 'order', textCollationIsBytewise, f0?.format);
      const f = f0 as FieldDescription;
      return {
        typeOid: f.typeOid,
        typeSize: f.typeSize,
        typeModifier: f.typeModifier,
        format: f.format,
        make: () => new ExtremeAcc(c0, ops, fn === 'max'),
      };
    }
    case 'bool_and':
    case 'bool_or': {
      const f = requireType(f0, [OID.bool], fn);
      return { ...BOOL, make: () => new BoolAcc(c0, f, fn === 'bool_and') };
    }
    case 'count_distinct': {
      const ops = typeOps(f0?.typeOid ?? 0, 'equality', textCollationIsBytewise, f0?.format);
      return { ...INT8, make: () => new CountDistinctAcc(c0, ops) };
    }
    default: {
      const never: never = fn;
      throw unsupported(`aggregate ${String(never)} is not supported across nodes`);
    }
  }
}
