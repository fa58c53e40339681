// Expressions over final aggregate rows (@tessera/sql `Expr`), typed and evaluated as Postgres
// does for int2/int4/int8/numeric: operator resolution (the wider integer type, numeric as soon as
// one side is numeric), integer division truncating toward zero, range errors per type, division
// by zero, numeric scales (+ - keep the larger, * adds them, / by select_div_scale), rounding half
// away from zero, numeric(p, s) casts with "numeric field overflow". NaN and infinities are refused.
import type { Expr, ScalarType } from '@tessera/sql';
import type { FieldDescription, Row } from './types.js';
import { OID } from './compare.js';
import {
  addDecimal,
  compareDecimal,
  divideDecimal,
  formatDecimal,
  parseDecimal,
} from './decimal.js';
import type { Decimal } from './decimal.js';
import { MergeError, SQLSTATE_NUMERIC_VALUE_OUT_OF_RANGE, unsupported } from './errors.js';
import { readDecimal, readInteger, readText } from './values.js';

const SQLSTATE_DIVISION_BY_ZERO = '22012';

type Finite = Decimal & { readonly kind: 'finite' };
type Value = bigint | Finite | string | null;

const INTEGER_RANK: Record<ScalarType, number> = { int2: 1, int4: 2, int8: 3, numeric: 4, text: 9 };

const RANGE: Record<'int2' | 'int4' | 'int8', [bigint, bigint, string]> = {
  int2: [-32768n, 32767n, 'smallint out of range'],
  int4: [-2147483648n, 2147483647n, 'integer out of range'],
  int8: [-(1n << 63n), (1n << 63n) - 1n, 'bigint out of range'],
};

function typeOfOid(oid: number): ScalarType | undefined {
  switch (oid) {
    case OID.int2:
      return 'int2';
    case OID.int4:
      return 'int4';
    case OID.int8:
      return 'int8';
    case OID.numeric:
      return 'numeric';
    case OID.text:
      return 'text';
    default:
      return undefined;
  }
}

export function fieldOf(type: ScalarType, typmod: number, name: string): FieldDescription {
  const [typeOid, typeSize] =
    type === 'int2'
      ? [OID.int2, 2]
      : type === 'int4'
        ? [OID.int4, 4]
        : type === 'int8'
          ? [OID.int8, 8]
          : type === 'numeric'
            ? [OID.numeric, -1]
            : [OID.text, -1];
  return { name, tableOid: 0, columnAttr: 0, typeOid, typeSize, typeModifier: typmod, format: 0 };
}

function isInteger(t: ScalarType): t is 'int2' | 'int4' | 'int8' {
  return t === 'int2' || t === 'int4' || t === 'int8';
}

function numericOnly(t: ScalarType, what: string): ScalarType {
  if (t === 'text') throw unsupported(`${what} over text is not supported across nodes`);
  return t;
}

/** The Postgres type of `e` given the input row's fields; refuses what it cannot type exactly. */
export function typeOf(e: Expr, fields: readonly FieldDescription[]): ScalarType {
  switch (e.kind) {
    case 'column': {
      const f = fields[e.index];
      const t = f === undefined ? undefined : typeOfOid(f.typeOid);
      if (t === undefined)
        throw unsupported(
          `expressions over values of type OID ${f?.typeOid ?? '?'} are not supported across nodes`,
        );
      return t;
    }
    case 'const': {
      if (e.literal === 'numeric') return 'numeric';
      const v = BigInt(e.text);
      if (v >= RANGE.int4[0] && v <= RANGE.int4[1]) return 'int4';
      return v >= RANGE.int8[0] && v <= RANGE.int8[1] ? 'int8' : 'numeric';
    }
    case 'op': {
      const l = numericOnly(typeOf(e.left, fields), `operator ${e.op}`);
      const r = numericOnly(typeOf(e.right, fields), `operator ${e.op}`);
      return INTEGER_RANK[l] >= INTEGER_RANK[r] ? l : r;
    }
    case 'negate':
      return numericOnly(typeOf(e.arg, fields), 'unary minus');
    case 'cast': {
      const from = typeOf(e.arg, fields);
      if (from === 'text' && e.type !== 'text')
        throw unsupported('a cast from text is not supported across nodes');
      if (e.typmod >= 4) {
        const scale = (e.typmod - 4) & 0xffff;
        const precision = (e.typmod - 4) >> 16;
        if (scale > precision || scale >= 0x8000)
          throw unsupported('numeric type modifiers with a negative scale or scale > precision');
      }
      return e.type;
    }
    case 'coalesce': {
      let t: ScalarType | undefined;
      for (const a of e.args) {
        const at = numericOnly(typeOf(a, fields), 'COALESCE');
        if (t === undefined || INTEGER_RANK[at] > INTEGER_RANK[t]) t = at;
      }
      if (t === undefined) throw unsupported('COALESCE without arguments');
      return t;
    }
    case 'nullif':
      numericOnly(typeOf(e.right, fields), 'NULLIF');
      return numericOnly(typeOf(e.left, fields), 'NULLIF');
    case 'round':
    case 'trunc': {
      const arg = numericOnly(typeOf(e.arg, fields), e.kind);
      if (e.digits === undefined) {
        // round(integer) resolves to round(double precision): not exact here.
        if (arg !== 'numeric')
          throw unsupported(
            `${e.kind}() of an integer is double precision, not supported across nodes`,
          );
        return 'numeric';
      }
      const d = typeOf(e.digits, fields);
      if (d !== 'int4' && d !== 'int2')
        throw unsupported(`${e.kind}(numeric, ${d}) is not supported across nodes`);
      return 'numeric';
    }
  }
}

function outOfRange(message: string): MergeError {
  return new MergeError(SQLSTATE_NUMERIC_VALUE_OUT_OF_RANGE, message);
}

function checked(v: bigint, t: 'int2' | 'int4' | 'int8'): bigint {
  const [lo, hi, message] = RANGE[t];
  if (v < lo || v > hi) throw outOfRange(message);
  return v;
}

function finite(d: Decimal): Finite {
  if (d.kind !== 'finite')
    throw unsupported(
      'NaN and infinite numeric values in expressions are not supported across nodes',
    );
  return d;
}

function toDecimal(v: bigint | Finite): Finite {
  return typeof v === 'bigint' ? { kind: 'finite', digits: v, scale: 0 } : v;
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** `d` rounded (half away from zero) or truncated to `scale` digits; scale < 0 rounds left of the point. */
function rescale(d: Finite, scale: number, mode: 'round' | 'trunc'): Finite {
  if (scale >= d.scale) return { kind: 'finite', digits: d.digits * pow10(scale - d.scale), scale };
  const drop = pow10(d.scale - scale);
  let q = d.digits / drop;
  const r = d.digits % drop;
  if (mode === 'round' && 2n * (r < 0n ? -r : r) >= drop) q += d.digits < 0n ? -1n : 1n;
  if (scale >= 0) return { kind: 'finite', digits: q, scale };
  return { kind: 'finite', digits: q * pow10(-scale), scale: 0 };
}

function integerDigits(d: Finite): number {
  const abs = d.digits < 0n ? -d.digits : d.digits;
  const whole = abs / pow10(d.scale);
  return whole === 0n ? 0 : whole.toString().length;
}

function divisionByZero(): MergeError {
  return new MergeError(SQLSTATE_DIVISION_BY_ZERO, 'division by zero');
}

function convert(v: Value, from: ScalarType, to: ScalarType): Value {
  if (v === null || from === to) return v;
  if (to === 'numeric') return toDecimal(v as bigint | Finite);
  if (isInteger(to)) return checked(v as bigint, to);
  return v;
}

/** Evaluates a typed expression over one row; `types` caches typeOf of every sub-expression. */
export class Evaluator {
  private readonly types = new Map<Expr, ScalarType>();

  constructor(private readonly fields: readonly FieldDescription[]) {}

  type(e: Expr): ScalarType {
    let t = this.types.get(e);
    if (t === undefined) {
      t = typeOf(e, this.fields);
      this.types.set(e, t);
    }
    return t;
  }

  /** Types every sub-expression up front, so refusals come before the first row is sent. */
  check(e: Expr): ScalarType {
    switch (e.kind) {
      case 'op':
      case 'nullif':
        this.check(e.left);
        this.check(e.right);
        break;
      case 'negate':
      case 'cast':
        this.check(e.arg);
        break;
      case 'coalesce':
        for (const a of e.args) this.check(a);
        break;
      case 'round':
      case 'trunc':
        this.check(e.arg);
        if (e.digits !== undefined) this.check(e.digits);
        break;
      default:
        break;
    }
    return this.type(e);
  }

  text(e: Expr, row: Row): Buffer | null {
    const v = this.value(e, row);
    if (v === null) return null;
    if (typeof v === 'bigint') return Buffer.from(v.toString());
    if (typeof v === 'string') return Buffer.from(v, 'utf8');
    return Buffer.from(formatDecimal(v));
  }

  value(e: Expr, row: Row): Value {
    const t = this.type(e);
    switch (e.kind) {
      case 'column': {
        const raw = row[e.index] ?? null;
        const f = this.fields[e.index];
        if (raw === null || f === undefined) return null;
        if (isInteger(t)) return readInteger(raw, f);
        return t === 'numeric' ? finite(readDecimal(raw, f)) : readText(raw);
      }
      case 'const':
        return t === 'numeric' ? finite(parseDecimal(e.text)) : BigInt(e.text);
      case 'negate': {
        const v = this.value(e.arg, row);
        if (v === null) return null;
        if (typeof v === 'bigint') return checked(-v, t as 'int2' | 'int4' | 'int8');
        const d = v as Finite;
        return { kind: 'finite', digits: -d.digits, scale: d.scale };
      }
      case 'op':
        return this.operator(e, t, row);
      case 'cast': {
        const from = this.type(e.arg);
        const v = this.value(e.arg, row);
        if (v === null) return null;
        if (e.type === 'text')
          return typeof v === 'bigint'
            ? v.toString()
            : typeof v === 'string'
              ? v
              : formatDecimal(v);
        if (isInteger(e.type)) {
          const i = typeof v === 'bigint' ? v : rescale(v as Finite, 0, 'round').digits;
          return checked(i, e.type);
        }
        const d = toDecimal(v as bigint | Finite);
        if (e.typmod < 4) return d;
        const precision = (e.typmod - 4) >> 16;
        const scale = (e.typmod - 4) & 0xffff;
        const r = rescale(d, scale, 'round');
        if (integerDigits(r) > precision - scale) throw outOfRange('numeric field overflow');
        void from;
        return r;
      }
      case 'coalesce':
        for (const a of e.args) {
          const v = this.value(a, row);
          if (v !== null) return convert(v, this.type(a), t);
        }
        return null;
      case 'nullif': {
        const l = this.value(e.left, row);
        const r = this.value(e.right, row);
        if (l === null || r === null) return l;
        const equal =
          compareDecimal(toDecimal(l as bigint | Finite), toDecimal(r as bigint | Finite)) === 0;
        return equal ? null : l;
      }
      case 'round':
      case 'trunc': {
        const v = this.value(e.arg, row);
        const digits = e.digits === undefined ? 0n : this.value(e.digits, row);
        if (v === null || digits === null) return null;
        // numeric_round limits the scale to +-NUMERIC_MAX_RESULT_SCALE.
        const scale = Math.max(-2000, Math.min(2000, Number(digits as bigint)));
        return rescale(toDecimal(v as bigint | Finite), scale, e.kind);
      }
    }
  }

  private operator(e: Expr & { kind: 'op' }, t: ScalarType, row: Row): Value {
    const lv = this.value(e.left, row);
    const rv = this.value(e.right, row);
    if (lv === null || rv === null) return null;
    if (isInteger(t)) {
      const a = lv as bigint;
      const b = rv as bigint;
      switch (e.op) {
        case '+':
          return checked(a + b, t);
        case '-':
          return checked(a - b, t);
        case '*':
          return checked(a * b, t);
        case '/':
          if (b === 0n) throw divisionByZero();
          return checked(a / b, t);
        case '%':
          if (b === 0n) throw divisionByZero();
          return a % b;
      }
    }
    const a = toDecimal(lv as bigint | Finite);
    const b = toDecimal(rv as bigint | Finite);
    switch (e.op) {
      case '+':
        return addDecimal(a, b) as Finite;
      case '-':
        return addDecimal(a, { kind: 'finite', digits: -b.digits, scale: b.scale }) as Finite;
      case '*':
        return { kind: 'finite', digits: a.digits * b.digits, scale: a.scale + b.scale };
      case '/':
        if (b.digits === 0n) throw divisionByZero();
        return divideDecimal(a, b) as Finite;
      case '%': {
        if (b.digits === 0n) throw divisionByZero();
        const scale = Math.max(a.scale, b.scale);
        const x = a.digits * pow10(scale - a.scale);
        const y = b.digits * pow10(scale - b.scale);
        return { kind: 'finite', digits: x % y, scale };
      }
    }
  }
}
